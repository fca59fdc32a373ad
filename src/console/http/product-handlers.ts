/**
 * The console's products pages and their forms, through the catalog's `ProductStore` as the Products API
 * uses it: each write is conditional on the product's version as the page showed it (a form of a page
 * older than the product is refused, never applied over the newer one), and reloads this process's catalog
 * after it. What a form says wrong is shown on the page, nothing written.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Option, ParseResult, Schema } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import {
  Availability,
  MAX_UNIT_AMOUNT,
  ProductInput,
  rewriteInput,
  type VariantPatch
} from "../../catalog/model/product.ts"
import {
  type ProductConflict,
  type ProductNotFound,
  ProductStore,
  type ProductVersionMismatch,
  type ProductWithStock,
  type StockBelowReserved,
  type StockChanged
} from "../../catalog/product-store.ts"
import type { StorageError } from "../../db/storage-error.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { formatAmount, parseDecimalAmount } from "../../shared/money.ts"
import { isStorableText } from "../../shared/storable-text.ts"
import type { ConsoleSession } from "../console-session-store.ts"
import type { FormFields } from "./access-middleware.ts"
import type { Notice } from "./layout.ts"
import { type FrameOf, queryParam, unstorableId } from "./order-handlers.ts"
import { notFoundPage, pageResponse, redirect } from "./page-handlers.ts"
import { productPath, renderProductDetail, renderProductList } from "./product-pages.ts"

const PAGE_SIZE = 25
const MAX_STOCK = 1_000_000_000

type Answer = Effect.Effect<HttpServerResponse.HttpServerResponse, StorageError>

/** What each form did, shown on the product's page after it (never text from the request). */
const DONE: Readonly<Record<string, string>> = {
  title: "Title saved.",
  variant: "Variant saved.",
  archive: "Product archived: it is no longer sold.",
  unchanged: "Nothing was different from what the page showed: nothing changed."
}

const problem = (text: string): Notice => ({ kind: "problem", text })

const STALE = "The product changed since the page was shown (it was saved meanwhile, here or through the API); " +
  "nothing was changed. The page now shows it as it is: check it and try again."

/** The version a form names: its hidden field, or -1 (matching none) when it is not one. */
const versionOf = (fields: FormFields): number => {
  const given = fields.get("version") ?? ""
  return /^\d{1,9}$/.test(given) ? Number(given) : -1
}

const wholeNumber = (text: string | undefined): number | undefined => {
  const given = (text ?? "").trim()
  return /^\d{1,10}$/.test(given) ? Number(given) : undefined
}

/** The variant form's fields, read; a refusal names what to correct. */
type ReadVariant =
  | {
    readonly unitAmount: number
    readonly listAmount: number | null
    readonly stock: number
    readonly availability: Availability
  }
  | { readonly refused: string }

const readVariantForm = (fields: FormFields, currency: string): ReadVariant => {
  const max = formatAmount(MAX_UNIT_AMOUNT, currency)
  const unitAmount = parseDecimalAmount(fields.get("unit_amount") ?? "")
  if (unitAmount === undefined || unitAmount > MAX_UNIT_AMOUNT) {
    return { refused: `Give the price as an amount with at most two decimals (like 25.00), at most ${max}.` }
  }
  const listText = (fields.get("list_amount") ?? "").trim()
  const listAmount = listText === "" ? null : parseDecimalAmount(listText)
  if (listAmount === undefined || (listAmount !== null && listAmount > MAX_UNIT_AMOUNT)) {
    return {
      refused: `Give the list price as an amount with at most two decimals (like 30.00), at most ${max}, ` +
        "or leave it blank for none."
    }
  }
  const stock = wholeNumber(fields.get("stock"))
  if (stock === undefined || stock > MAX_STOCK) {
    return { refused: `Give the stock on hand as a whole number of units, at most ${MAX_STOCK}.` }
  }
  const availability = Schema.decodeUnknownOption(Availability)(fields.get("availability"))
  if (Option.isNone(availability)) return { refused: "Choose one of the availabilities offered." }
  return { unitAmount, listAmount, stock, availability: availability.value }
}

export const makeProductHandlers = Effect.fnUntraced(function*(frameOf: FrameOf) {
  const store = yield* ProductStore
  const catalog = yield* Catalog
  // Its currency is the file's: fixed.
  const currency = catalog.latest().currency

  const list = Effect.fnUntraced(function*(session: ConsoleSession) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const q = queryParam(request, "q")?.slice(0, 128)
    const given = queryParam(request, "availability")
    const availability = Availability.literals.find((name) => name === given)
    const archived = queryParam(request, "archived") === "true"
    const after = queryParam(request, "after")
    const filter = { q, availability, archived, after }
    const found = (q !== undefined && unstorableId(q)) || (after !== undefined && unstorableId(after))
      ? []
      : yield* store.list({ q, availability, archived, after, limit: PAGE_SIZE + 1 })
    const page = found.slice(0, PAGE_SIZE)
    return pageResponse(
      frameOf(session, "Products"),
      renderProductList({
        products: page,
        filter,
        next: found.length > PAGE_SIZE ? page[page.length - 1]?.product.id : undefined,
        currency
      })
    )
  })

  const show = (session: ConsoleSession, found: ProductWithStock, notice?: Notice, status = 200) =>
    pageResponse(
      frameOf(session, found.product.title, notice),
      renderProductDetail({ found, currency, csrfToken: session.csrfToken }),
      status
    )

  const noProduct = (session: ConsoleSession, id: string) =>
    notFoundPage(frameOf(session, "Product not found"), `No product ${maskCardNumbers(id)}.`)

  /** The product's page as it is now, with `notice`; its 404 when there is none. */
  const detail = (session: ConsoleSession, id: string, notice?: Notice, status = 200): Answer =>
    unstorableId(id)
      ? Effect.succeed(noProduct(session, id))
      : Effect.map(store.get(id), (found) =>
        Option.match(found, {
          onNone: () => noProduct(session, id),
          onSome: (product) => show(session, product, notice, status)
        }))

  const view = (session: ConsoleSession, id: string) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const asked = queryParam(request, "done") ?? ""
      // Own keys only: the query is the client's text (`constructor` is no notice).
      const done = Object.hasOwn(DONE, asked) ? DONE[asked] : undefined
      return detail(session, id, done === undefined ? undefined : { kind: "notice", text: done })
    })

  /** Written: this process sells the change at once (a failed reload is left to the next poll). */
  const written = (id: string, done: string) =>
    Effect.as(
      Effect.catchAll(catalog.refresh, (error) => Effect.logWarning("catalog reload failed", error.reason)),
      redirect(`${productPath(id)}?done=${done}`)
    )

  /** A write's refusal by the store, shown on the product's page as it is now. */
  const refused = (
    session: ConsoleSession,
    id: string,
    error: ProductConflict | ProductNotFound | ProductVersionMismatch | StockBelowReserved | StockChanged
  ): Answer => {
    switch (error._tag) {
      case "StockChanged":
        return detail(
          session,
          id,
          problem(
            `The stock of ${error.variantId} changed since the page was shown (${error.onHand} on hand now); ` +
              "nothing was changed. Check it and try again."
          ),
          409
        )
      case "ProductVersionMismatch":
        return detail(session, id, problem(STALE), 409)
      case "ProductNotFound":
        return detail(session, id)
      case "StockBelowReserved":
        return detail(
          session,
          id,
          problem(
            `Checkout sessions hold ${error.reserved} units of ${error.variantId}: the stock on hand cannot be set ` +
              "below that. Nothing was changed."
          ),
          422
        )
      case "ProductConflict":
        return detail(session, id, problem(`Variant id ${error.id} is another product's. Nothing was changed.`), 409)
    }
  }

  /**
   * The product as the form's page showed it, for `act`; else the answer: its 404, or the stale form's
   * refusal (the store checks the version again as it writes).
   */
  const onShownProduct = (
    session: ConsoleSession,
    id: string,
    fields: FormFields,
    act: (found: ProductWithStock, version: number) => Answer
  ): Answer =>
    unstorableId(id) ? Effect.succeed(noProduct(session, id)) : Effect.flatMap(store.get(id), (found) => {
      if (Option.isNone(found)) return Effect.succeed(noProduct(session, id))
      const version = versionOf(fields)
      return version === found.value.product.version
        ? act(found.value, version)
        : Effect.succeed(show(session, found.value, problem(STALE), 409))
    })

  const rename = (session: ConsoleSession, id: string, fields: FormFields): Answer =>
    onShownProduct(session, id, fields, (found, version) => {
      const { product } = found
      const title = (fields.get("title") ?? "").trim()
      if (product.archivedAt !== undefined) {
        return Effect.succeed(show(session, found, problem("An archived product is not changed here."), 409))
      }
      if (title.length === 0 || title.length > 256 || !isStorableText(title)) {
        return Effect.succeed(show(session, found, problem("Give a title of 1 to 256 characters."), 400))
      }
      if (title === product.title) return Effect.succeed(redirect(`${productPath(id)}?done=unchanged`))
      const rewrite = rewriteInput(product, title)
      if (rewrite === undefined) {
        return Effect.succeed(
          show(session, found, problem("Every variant of this product is archived: it is not changed here."), 409)
        )
      }
      const input = Schema.decodeUnknownEither(ProductInput)(rewrite)
      if (input._tag === "Left") {
        const message = ParseResult.ArrayFormatter.formatErrorSync(input.left)[0]?.message ?? "it is not valid"
        return Effect.succeed(show(session, found, problem(`The product cannot be rewritten: ${message}.`), 400))
      }
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        store.replace(input.right, version, now).pipe(
          Effect.zipRight(written(id, "title")),
          Effect.catchTags({
            ProductConflict: (error) => refused(session, id, error),
            ProductNotFound: (error) => refused(session, id, error),
            ProductVersionMismatch: (error) => refused(session, id, error)
          })
        ))
    })

  const editVariant = (session: ConsoleSession, id: string, variantId: string, fields: FormFields): Answer =>
    onShownProduct(session, id, fields, (found, version) => {
      const variant = found.product.variants.find((candidate) => candidate.id === variantId)
      if (variant === undefined || variant.archivedAt !== undefined || found.product.archivedAt !== undefined) {
        return Effect.succeed(
          notFoundPage(
            frameOf(session, "Variant not found"),
            `Product ${maskCardNumbers(id)} has no variant ${maskCardNumbers(variantId)} on sale.`
          )
        )
      }
      const read = readVariantForm(fields, currency)
      if ("refused" in read) return Effect.succeed(show(session, found, problem(read.refused), 400))
      // Sales change the stock without a product write: the stock is set only when the form changes it,
      // and only while the level the page showed is still on hand (the store checks it under the stock lock).
      const seen = wholeNumber(fields.get("stock_seen"))
      const setsStock = read.stock !== seen
      if (setsStock && seen === undefined) {
        return Effect.succeed(
          show(session, found, problem("The form lacks the stock it was shown with: reload the page."), 400)
        )
      }
      const patch: VariantPatch = {
        ...(read.unitAmount === variant.unit_amount ? {} : { unit_amount: read.unitAmount }),
        ...((read.listAmount ?? undefined) === variant.list_amount ? {} : { list_amount: read.listAmount }),
        ...(read.availability === variant.availability ? {} : { availability: read.availability }),
        ...(setsStock ? { stock: read.stock, expected_stock: seen } : {})
      }
      if (Object.keys(patch).length === 0) return Effect.succeed(redirect(`${productPath(id)}?done=unchanged`))
      return Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          store.patchVariant(id, variantId, patch, version, now).pipe(
            Effect.zipRight(written(id, "variant")),
            Effect.catchTags({
              ProductNotFound: (error) => refused(session, id, error),
              ProductVersionMismatch: (error) => refused(session, id, error),
              StockBelowReserved: (error) => refused(session, id, error),
              StockChanged: (error) => refused(session, id, error)
            })
          )
      )
    })

  const archive = (session: ConsoleSession, id: string, fields: FormFields): Answer =>
    onShownProduct(
      session,
      id,
      fields,
      (_found, version) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store.archive(id, version, now).pipe(
            Effect.zipRight(written(id, "archive")),
            Effect.catchTags({
              ProductNotFound: (error) => refused(session, id, error),
              ProductVersionMismatch: (error) => refused(session, id, error)
            })
          ))
    )

  return { list, view, rename, editVariant, archive }
})
