/**
 * The Cart API's handlers. Only `API-Version` 2026-04-17 defines carts: any other accepted version gets
 * 400 `unsupported_api_version` naming it. Bodies are decoded strictly (a field the version does not
 * define is refused), after the checks every JSON body gets (storable text, depth, size).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, ParseResult, Schema } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig } from "../../platform/config.ts"
import {
  BadRequest,
  type InternalError,
  internalError,
  NotFound,
  type ServiceUnavailable,
  serviceUnavailable,
  Unprocessable
} from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import {
  badRequestFromParseError,
  readJson,
  readOptionalJson,
  unstorableTextError
} from "../../platform/http/request-body.ts"
import { requireRole } from "../../platform/http/route-guards.ts"
import { RequestedApiVersion } from "../../platform/http/security.ts"
import { type CartNotFound, CartService, type NothingAvailable, type PricedCart } from "../cart-service.ts"
import { continueUrl } from "../model/handoff-link.ts"
import { CartsApi } from "./api.ts"
import { CART_API_VERSION, CartCreateRequest, CartUpdateRequest, cartWire, contentsOf } from "./cart-wire.ts"

const requireVersion = Effect.flatMap(RequestedApiVersion, (version) =>
  version === CART_API_VERSION
    ? Effect.void
    : Effect.fail(
      new BadRequest({
        type: "invalid_request",
        code: "unsupported_api_version",
        message: `The Cart API begins with API-Version ${CART_API_VERSION}; API-Version ${version} has no carts.`,
        param: "$.headers['API-Version']",
        supported_versions: [CART_API_VERSION]
      })
    ))

const strictly = { errors: "first", onExcessProperty: "error" } as const

const decodeBody = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, strictly)
  return Effect.flatMap(readJson, (json): Either.Either<A, BadRequest> => {
    const unstorable = unstorableTextError(json)
    if (unstorable !== undefined) return Either.left(unstorable)
    return Either.mapLeft(decode(json), (error: ParseResult.ParseError) => badRequestFromParseError(error))
  })
}

/** `{}` or no body (the RFC); any other JSON object is accepted and ignored, anything else refused. */
const cancelBody = Effect.flatMap(
  readOptionalJson,
  (json): Either.Either<void, BadRequest> =>
    json === undefined || (typeof json === "object" && json !== null && !Array.isArray(json))
      ? Either.void
      : Either.left(
        new BadRequest({ type: "invalid_request", code: "invalid", message: "The body must be an object.", param: "$" })
      )
)

const notFound = () =>
  new NotFound({ type: "invalid_request", code: "not_found", message: "Cart not found or has expired." })

const nothingAvailable = () =>
  new Unprocessable({
    type: "invalid_request",
    code: "out_of_stock",
    message: "None of the requested items is available.",
    param: "$.line_items"
  })

type CartFailure = CartNotFound | NothingAvailable | StorageError

const toApiError = (error: CartFailure) => {
  switch (error._tag) {
    case "CartNotFound":
      return notFound()
    case "NothingAvailable":
      return nothingAvailable()
    case "StorageError":
      return error.reason === "unavailable" ? serviceUnavailable() : internalError()
  }
}

type ApiErrorOf<E> = E extends CartNotFound ? NotFound
  : E extends NothingAvailable ? Unprocessable
  : E extends StorageError ? ServiceUnavailable | InternalError
  : never

const mapCartErrors = <A, E extends CartFailure, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiErrorOf<E>, R> =>
  effect.pipe(
    Effect.tapError((error) =>
      error._tag === "StorageError" ? Effect.logError("storage error", error.reason, error.cause) : Effect.void
    ),
    Effect.mapError((error) => toApiError(error) as ApiErrorOf<E>)
  )

export const CartsHandlers = groupHandlers(
  CartsApi,
  "carts",
  Effect.fnUntraced(function*(handlers) {
    const carts = yield* CartService
    const config = yield* AppConfig
    const { publicBaseUrl } = config
    // Served with the checkout role (as the orders are), in 2026-04-17 only.
    const admitted = Effect.zipRight(requireRole(config, "checkout"), requireVersion)
    const answer = (status: 200 | 201) => ({ cart, estimate }: PricedCart) =>
      HttpServerResponse.unsafeJson(cartWire(cart, estimate, continueUrl(publicBaseUrl, cart.handoffToken)), {
        status
      })
    const create = Effect.fnUntraced(function*() {
      yield* admitted
      const request = yield* decodeBody(CartCreateRequest)
      return yield* Effect.map(mapCartErrors(carts.create(contentsOf(request), request.locale)), answer(201))
    })
    const update = Effect.fnUntraced(function*(id: string) {
      yield* admitted
      const request = yield* decodeBody(CartUpdateRequest)
      return yield* Effect.map(mapCartErrors(carts.replace(id, contentsOf(request))), answer(200))
    })
    const cancel = Effect.fnUntraced(function*(id: string) {
      yield* admitted
      yield* cancelBody
      return yield* Effect.map(mapCartErrors(carts.cancel(id)), answer(200))
    })
    return handlers
      .handleRaw("create", () => create())
      .handle(
        "get",
        ({ path }) => Effect.zipRight(admitted, Effect.map(mapCartErrors(carts.get(path.id)), answer(200)))
      )
      .handleRaw("update", ({ path }) => update(path.id))
      .handleRaw("cancel", ({ path }) => cancel(path.id))
  })
)
