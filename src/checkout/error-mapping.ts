/**
 * Domain and service failures → the API errors of CONTRACT §3/§5. One place, so every route
 * answers the same failure the same way.
 */
import { Effect } from "effect"
import type { ReducerError } from "./session-model.ts"
import type { InvalidPaymentData, PaymentInProgress, SessionNotFound } from "./checkout-errors.ts"
import type { PaymentDeclined, PaymentRejected } from "../payments/payment-provider.ts"
import type { StorageError } from "../db/storage-error.ts"
import {
  BadRequest,
  Conflict,
  internalError,
  MethodNotAllowed,
  NotFound,
  PaymentRequired,
  type InternalError,
  type ServiceUnavailable,
  serviceUnavailable,
  Unprocessable
} from "../platform/http/errors.ts"

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
  : E extends
    { readonly _tag: "OutOfStock" | "SessionNotModifiable" | "SessionNotReady" | "PaymentRejected" | "DiscountUnavailable" }
    ? Unprocessable
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
        message: `The session is not ready for payment${first ? `: ${first.content}` : ""}. See the session's messages.`,
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
        message: `${error.rejected.message} The session was re-priced without it; review the new total and complete again.`,
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
      error._tag === "StorageError" ? Effect.logError("storage error", error.reason, error.cause) : Effect.void
    ),
    Effect.mapError((error) => toApiError(error, final ?? 409) as ApiErrorOf<E, Final>)
  )
