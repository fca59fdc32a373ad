/**
 * Handlers of the Products API. After a write this process reloads its catalog at once; the others
 * see the change at their next poll of the catalog version.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Either, Option } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { answeredWith, commitWithAnswer } from "../../idempotency/idempotent-answer.ts"
import { AppConfig } from "../../platform/config.ts"
import {
  BadRequest,
  Conflict,
  type InternalError,
  NotFound,
  PreconditionFailed,
  type ServiceUnavailable,
  Unprocessable
} from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { decodeDeclaredBody, readOptionalJson } from "../../platform/http/request-body.ts"
import { requireRole, storageFailure } from "../../platform/http/route-guards.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { Catalog } from "../catalog-service.ts"
import { duplicateVariant, type ProductInput, type VariantPatch } from "../model/product.ts"
import {
  type ProductConflict,
  ProductNotFound,
  ProductStore,
  type ProductVersionMismatch,
  type ProductWithStock,
  type StockBelowReserved,
  type StockChanged
} from "../product-store.ts"
import { ProductsApi, ProductsGroup } from "./api.ts"
import { decodeCursor, encodeCursor, etagOf, ifMatchVersion, productView } from "./product-view.ts"

type ProductFailure =
  | ProductConflict
  | ProductNotFound
  | ProductVersionMismatch
  | StockBelowReserved
  | StockChanged
  | StorageError

const conflictParam = (error: ProductConflict, input: ProductInput | undefined) => {
  if (error.reason === "product_exists") return "$.id"
  const index = input?.variants.findIndex((variant) => variant.id === error.id) ?? -1
  return index >= 0 ? `$.variants[${index}].id` : "$.variants"
}

const failure = (
  error: ProductFailure,
  input?: ProductInput
): Effect.Effect<
  never,
  Conflict | NotFound | PreconditionFailed | Unprocessable | ServiceUnavailable | InternalError
> => {
  switch (error._tag) {
    case "ProductConflict":
      return Effect.fail(
        new Conflict({
          type: "invalid_request",
          code: error.reason,
          message: error.reason === "product_exists"
            ? `A product ${error.id} exists already: PUT /products/${error.id} rewrites it.`
            : `Variant id ${error.id} is another product's.`,
          param: conflictParam(error, input)
        })
      )
    case "ProductNotFound":
      return Effect.fail(
        new NotFound({
          type: "invalid_request",
          code: "not_found",
          message: error.variantId === undefined
            ? `No product ${maskCardNumbers(error.productId)}.`
            : `Product ${maskCardNumbers(error.productId)} has no variant ${maskCardNumbers(error.variantId)}.`,
          param: error.variantId === undefined ? "$.product_id" : "$.variant_id"
        })
      )
    case "ProductVersionMismatch":
      return Effect.fail(
        new PreconditionFailed({
          type: "invalid_request",
          code: "precondition_failed",
          message: `The product changed since it was read: it is at version ${
            etagOf(error.current)
          }. Read it again, then write.`,
          param: "$[\"if-match\"]"
        })
      )
    case "StockBelowReserved":
      return Effect.fail(
        new Unprocessable({
          type: "invalid_request",
          code: "stock_below_reserved",
          message:
            `Checkout sessions hold ${error.reserved} units of ${error.variantId}: stock cannot be set below that.`,
          param: "$.stock"
        })
      )
    case "StockChanged":
      return Effect.fail(
        new Conflict({
          type: "invalid_request",
          code: "stock_changed",
          message: `${error.variantId} has ${error.onHand} units on hand, not $.expected_stock: nothing was changed.`,
          param: "$.expected_stock"
        })
      )
    case "StorageError":
      return storageFailure(error)
  }
}

const checkPatch = (patch: VariantPatch): Effect.Effect<void, BadRequest> =>
  patch.expected_stock === undefined || patch.stock !== undefined ? Effect.void : Effect.fail(
    new BadRequest({
      type: "invalid_request",
      code: "invalid",
      message: "$.expected_stock guards a stock change: send $.stock with it.",
      param: "$.expected_stock"
    })
  )

const checkInput = (input: ProductInput, pathId?: string): Effect.Effect<void, BadRequest> => {
  if (pathId !== undefined && input.id !== pathId) {
    return Effect.fail(
      new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: `$.id must be the path's product id, ${maskCardNumbers(pathId)}.`,
        param: "$.id"
      })
    )
  }
  const duplicate = duplicateVariant(input)
  return duplicate === undefined ? Effect.void : Effect.fail(
    new BadRequest({
      type: "invalid_request",
      code: "invalid",
      message: `Variant id ${duplicate.id} appears twice.`,
      param: duplicate.param
    })
  )
}

const decodeCreate = decodeDeclaredBody(ProductsGroup, "create")
const decodeReplace = decodeDeclaredBody(ProductsGroup, "replace")
const decodePatch = decodeDeclaredBody(ProductsGroup, "patchVariant")

const DEFAULT_PAGE = 50

export const ProductsHandlers = groupHandlers(
  ProductsApi,
  "products",
  Effect.fnUntraced(function*(handlers) {
    const store = yield* ProductStore
    const catalog = yield* Catalog
    const gate = requireRole(yield* AppConfig, "checkout")
    const currency = catalog.latest().currency

    const answer = (found: ProductWithStock, status = 200) =>
      HttpServerResponse.unsafeJson(productView(found, currency), {
        status,
        headers: { etag: etagOf(found.product.version) }
      })

    /** The write is committed: a failed reload is left to the next poll. */
    const afterWrite = (found: ProductWithStock, status = 200) =>
      Effect.as(
        Effect.catchAll(catalog.refresh, (error) => Effect.logWarning("catalog reload failed", error.reason)),
        answer(found, status)
      )

    const now = Clock.currentTimeMillis

    return handlers
      .handle(
        "list",
        Effect.fnUntraced(function*({ urlParams }) {
          yield* gate
          const limit = urlParams.limit ?? DEFAULT_PAGE
          const after = urlParams.cursor === undefined ? undefined : decodeCursor(urlParams.cursor)
          if (urlParams.cursor !== undefined && after === undefined) {
            return yield* new BadRequest({
              type: "invalid_request",
              code: "invalid",
              message: "cursor must be a next_cursor of an earlier page.",
              param: "$.cursor"
            })
          }
          const found = yield* Effect.catchAll(
            store.list({
              availability: urlParams.availability,
              q: urlParams.q,
              archived: urlParams.archived === "true",
              after,
              limit: limit + 1
            }),
            storageFailure
          )
          const page = found.slice(0, limit)
          const last = page[page.length - 1]
          return {
            data: page.map((item) => productView(item, currency)),
            next_cursor: found.length > limit && last !== undefined ? encodeCursor(last.product.id) : null
          }
        })
      )
      .handleRaw(
        "create",
        Effect.fnUntraced(function*() {
          yield* gate
          const input = yield* decodeCreate
          yield* checkInput(input)
          // The answer commits with the product: a retry after a crash replays it, never a 409 of its own write.
          const written = yield* commitWithAnswer(
            store.transaction,
            store.create(input, yield* now),
            (created) => Option.some(Either.right(created))
          ).pipe(
            answeredWith({ success: (created: ProductWithStock) => answer(created, 201) }),
            Effect.catchAll((error) => failure(error, input))
          )
          yield* Effect.catchAll(catalog.refresh, (error) => Effect.logWarning("catalog reload failed", error.reason))
          return written
        })
      )
      .handle(
        "get",
        Effect.fnUntraced(function*({ path }) {
          yield* gate
          const found = yield* Effect.catchAll(store.get(path.product_id), storageFailure)
          if (Option.isNone(found)) return yield* failure(new ProductNotFound({ productId: path.product_id }))
          return answer(found.value)
        })
      )
      .handleRaw(
        "replace",
        Effect.fnUntraced(function*({ headers, path }) {
          yield* gate
          const input = yield* decodeReplace
          yield* checkInput(input, path.product_id)
          const replaced = yield* Effect.catchAll(
            store.replace(input, ifMatchVersion(headers["if-match"]), yield* now),
            (error) => failure(error, input)
          )
          return yield* afterWrite(replaced)
        })
      )
      .handleRaw(
        "patchVariant",
        Effect.fnUntraced(function*({ headers, path }) {
          yield* gate
          const patch = yield* decodePatch
          yield* checkPatch(patch)
          const patched = yield* Effect.catchAll(
            store.patchVariant(
              path.product_id,
              path.variant_id,
              patch,
              ifMatchVersion(headers["if-match"]),
              yield* now
            ),
            (error) => failure(error)
          )
          return yield* afterWrite(patched)
        })
      )
      .handle(
        "archive",
        Effect.fnUntraced(function*({ headers, path }) {
          yield* gate
          // The route defines no body: one sent anyway is held to the common rules.
          yield* readOptionalJson
          const archived = yield* Effect.catchAll(
            store.archive(path.product_id, ifMatchVersion(headers["if-match"]), yield* now),
            (error) => failure(error)
          )
          return yield* afterWrite(archived)
        })
      )
  })
)
