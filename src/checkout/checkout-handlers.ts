/**
 * Checkout Session API handlers: decode the body by the common rules with the schema the endpoint
 * declares, call the service, map its failures (one place, so every route answers the same
 * failure the same way: CONTRACT §3/§5). A bad `payment_data` is reported in the shape its keys
 * name (`src/shared/schema-failure.ts`).
 *
 * Sessions are answered in their wire form, built from the typed session instead of being encoded
 * by the endpoint's schema at run time: the session schemas have no transformations, so encoding
 * would only re-validate what the domain built and drop the internal fields, a full pass over a
 * large nested object per response. The endpoint schemas still document the responses (OpenAPI),
 * and the HTTP tests check every session response against them strictly.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { PaymentDeclined, PaymentRejected } from "../payments/payment-provider.ts"
import {
  BadRequest,
  Conflict,
  type InternalError,
  internalError,
  MethodNotAllowed,
  NotFound,
  PaymentRequired,
  type ServiceUnavailable,
  serviceUnavailable,
  TooManyRequests,
  Unprocessable
} from "../platform/http/errors.ts"
import { decodeDeclaredBody } from "../platform/http/request-body.ts"
import { IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS, setRetryAfter } from "../platform/http/retry-after.ts"
import { CurrentClient } from "../platform/http/security.ts"
import { RateLimiter } from "../rate-limit/rate-limiter-service.ts"
import { CheckoutApi, CheckoutGroup } from "./checkout-api.ts"
import type { InvalidPaymentData, PaymentInProgress, SessionNotFound } from "./checkout-errors.ts"
import type { OrderSummary } from "./checkout-schemas.ts"
import { CheckoutService } from "./checkout-service.ts"
import { type ReducerError, type Session, toCheckoutSession, toCheckoutSessionWithOrder } from "./session-model.ts"

// ---------------------------------------------------------------------------------------------
// Responses

/** A JSON response with the session's wire form. */
const sessionResponse = (session: Session, status: 200 | 201 = 200) =>
  HttpServerResponse.unsafeJson(toCheckoutSession(session), { status })

/**
 * A session's wire form already serialized (`CheckoutService.getJson`): GET answers with the text
 * the store produced, without parsing the session and serializing it again.
 */
const sessionJsonResponse = (json: string) =>
  HttpServerResponse.text(json, { status: 200, contentType: "application/json" })

const completedSessionResponse = (session: Session & { readonly order: OrderSummary }) =>
  HttpServerResponse.unsafeJson(toCheckoutSessionWithOrder(session), { status: 200 })

// ---------------------------------------------------------------------------------------------
// Failures → API errors

const finalCode = (status: "completed" | "canceled" | "expired") => `session_${status}` as const

export type CheckoutFailure =
  | ReducerError
  | SessionNotFound
  | InvalidPaymentData
  | PaymentInProgress
  | PaymentDeclined
  | PaymentRejected
  | StorageError

/** The API error each failure becomes; `Final` picks 409 (complete) or 405 (cancel) for a final session. */
export type ApiErrorOf<E, Final extends 405 | 409> = E extends
  { readonly _tag: "UnknownProduct" | "UnknownFulfillmentOption" | "InvalidPaymentData" } ? BadRequest
  : E extends {
    readonly _tag:
      | "OutOfStock"
      | "SessionNotModifiable"
      | "SessionNotReady"
      | "PaymentRejected"
      | "DiscountUnavailable"
  } ? Unprocessable
  : E extends { readonly _tag: "SessionNotFound" } ? NotFound
  : E extends { readonly _tag: "PaymentDeclined" } ? PaymentRequired
  : E extends { readonly _tag: "SessionFinal" } ? (Final extends 405 ? MethodNotAllowed : Conflict)
  : E extends { readonly _tag: "PaymentInProgress" } ? Conflict
  : E extends { readonly _tag: "StorageError" } ? ServiceUnavailable | InternalError
  : never

export const toApiError = (error: CheckoutFailure, final: 405 | 409 = 409) => {
  switch (error._tag) {
    case "UnknownProduct":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: `$.items[${error.index}].id names no product of this merchant.`,
        param: `$.items[${error.index}].id`
      })
    case "OutOfStock":
      return new Unprocessable({
        type: "invalid_request",
        code: "out_of_stock",
        message: error.available === 0
          ? `${error.productId} is out of stock.`
          : `Only ${error.available} of ${error.productId} available.`,
        param: `$.items[${error.index}]`
      })
    case "UnknownFulfillmentOption":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: "$.fulfillment_option_id must be one of the fulfillment options offered on the session.",
        param: "$.fulfillment_option_id"
      })
    case "SessionNotModifiable":
      return new Unprocessable({
        type: "invalid_request",
        code: "session_not_modifiable",
        message: `The session is ${error.status} and can no longer be changed.`
      })
    case "SessionNotReady": {
      const first = error.messages[0]
      return new Unprocessable({
        type: "invalid_request",
        code: "session_not_ready",
        message: `The session is not ready for payment${
          first ? `: ${first.content}` : ""
        }. See the session's messages.`,
        ...(first?.param ? { param: first.param } : {})
      })
    }
    case "SessionFinal": {
      const fields = {
        type: "invalid_request" as const,
        code: finalCode(error.status),
        message: `The session is already ${error.status}.`
      }
      return final === 409 ? new Conflict(fields) : new MethodNotAllowed(fields)
    }
    case "SessionNotFound":
      return new NotFound({
        type: "invalid_request",
        code: "not_found",
        message: `No checkout session ${error.id}.`,
        param: "$.checkout_session_id"
      })
    case "PaymentInProgress":
      return new Conflict({
        type: "request_not_idempotent",
        code: "idempotency_in_flight",
        message: "Another payment for this checkout session is in progress; retry shortly."
      })
    case "InvalidPaymentData":
      return new BadRequest({ type: "invalid_request", code: "invalid", message: error.message, param: error.param })
    case "PaymentDeclined":
      return new PaymentRequired({ type: "processing_error", code: "payment_declined", message: error.message })
    case "PaymentRejected":
      return new Unprocessable({
        type: "invalid_request",
        code: "payment_declined",
        message: error.message,
        param: error.param
      })
    case "DiscountUnavailable":
      return new Unprocessable({
        type: "invalid_request",
        code: error.rejected.reason,
        message:
          `${error.rejected.message} The session was re-priced without it; review the new total and complete again.`,
        param: error.rejected.index >= 0 ? `$.discounts.codes[${error.rejected.index}]` : "$.discounts"
      })
    case "StorageError":
      return error.reason === "unavailable" ? serviceUnavailable() : internalError()
  }
}

/**
 * Maps the failure channel of a service call to API errors; storage failures are logged.
 * `final` is the status for an operation on a completed, canceled or expired session.
 */
export const mapCheckoutErrors = <A, E extends CheckoutFailure, R, Final extends 405 | 409 = 409>(
  effect: Effect.Effect<A, E, R>,
  final?: Final
): Effect.Effect<A, ApiErrorOf<E, Final>, R> =>
  effect.pipe(
    Effect.tapError((error) =>
      error._tag === "StorageError"
        ? Effect.logError("storage error", error.reason, error.cause)
        : error._tag === "PaymentInProgress"
        // The in-flight 409 says when to retry, like the idempotency middleware's own.
        ? setRetryAfter(IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS)
        : Effect.void
    ),
    Effect.mapError((error) => toApiError(error, final ?? 409) as ApiErrorOf<E, Final>)
  )

// ---------------------------------------------------------------------------------------------
// Handlers

/** Rejected discount codes allowed per API key: this many at once, refilled over a minute (CONTRACT §9). */
export const DISCOUNT_CODE_REJECTIONS_PER_MINUTE = 20
const discountCodeBucket = {
  capacity: DISCOUNT_CODE_REJECTIONS_PER_MINUTE,
  refillPerSecond: DISCOUNT_CODE_REJECTIONS_PER_MINUTE / 60
}

/** The bodies' decoders, built once from the schemas the endpoints declare. */
const decodeCreateBody = decodeDeclaredBody(CheckoutGroup, "create")
const decodeUpdateBody = decodeDeclaredBody(CheckoutGroup, "update")
const decodeCompleteBody = decodeDeclaredBody(CheckoutGroup, "complete")

export const CheckoutHandlers = HttpApiBuilder.group(CheckoutApi, "checkout", (handlers) =>
  Effect.gen(function*() {
    const checkout = yield* CheckoutService
    const limiter = yield* RateLimiter

    /**
     * Code guessing (CONTRACT §9): a request carrying codes is refused with 429 (and Retry-After,
     * nothing applied) while the API key's bucket of rejected codes is empty; after the change,
     * each code it got rejected takes one token.
     */
    const limitDiscountCodes = <E, R>(
      codes: ReadonlyArray<string> | undefined,
      change: Effect.Effect<Session, E, R>
    ): Effect.Effect<Session, E | TooManyRequests, R | CurrentClient> =>
      codes === undefined || codes.length === 0 ? change : Effect.gen(function*() {
        const key = `discount_codes:${(yield* CurrentClient).keyId}`
        yield* limiter.peek(key, discountCodeBucket).pipe(
          Effect.catchTag("RateLimited", (limited) =>
            Effect.zipRight(
              setRetryAfter(limited.retryAfterSeconds),
              Effect.fail(
                new TooManyRequests({
                  type: "invalid_request",
                  code: "too_many_requests",
                  message: `Too many rejected discount codes; retry after ${limited.retryAfterSeconds} s.`,
                  param: "$.discounts.codes"
                })
              )
            ))
        )
        const session = yield* change
        for (const _ of session.discounts?.rejected ?? []) {
          yield* Effect.ignore(limiter.consume(key, discountCodeBucket))
        }
        return session
      })
    return handlers
      .handleRaw("create", () =>
        decodeCreateBody.pipe(
          Effect.flatMap((body) => limitDiscountCodes(body.discounts?.codes, mapCheckoutErrors(checkout.create(body)))),
          Effect.map((session) => sessionResponse(session, 201))
        ))
      .handle(
        "get",
        ({ path }) => Effect.map(mapCheckoutErrors(checkout.getJson(path.checkout_session_id)), sessionJsonResponse)
      )
      .handleRaw("update", ({ path }) =>
        decodeUpdateBody.pipe(
          Effect.flatMap((body) =>
            limitDiscountCodes(
              body.discounts?.codes,
              mapCheckoutErrors(checkout.update(path.checkout_session_id, body))
            )
          ),
          Effect.map(sessionResponse)
        ))
      .handleRaw("complete", ({ path }) =>
        decodeCompleteBody.pipe(
          Effect.flatMap((body) => mapCheckoutErrors(checkout.complete(path.checkout_session_id, body))),
          Effect.map(completedSessionResponse)
        ))
      .handle(
        "cancel",
        ({ path }) => Effect.map(mapCheckoutErrors(checkout.cancel(path.checkout_session_id), 405), sessionResponse)
      )
  }))
