/** The checkout failures as API errors, in one place (CONTRACT §3/§5), in the request version's words. */
import { Effect } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { checkoutIdempotencyError } from "../../idempotency/idempotency-errors.ts"
import { answerIsNotNow } from "../../idempotency/idempotent-answer.ts"
import { type PaymentDeclined, type PaymentPending, type PaymentRejected } from "../../payments/model/payment.ts"
import {
  BadRequest,
  Conflict,
  type InternalError,
  internalError,
  MethodNotAllowed,
  NotFound,
  PaymentRequired,
  ServiceUnavailable,
  serviceUnavailable,
  Unprocessable
} from "../../platform/http/errors.ts"
import { IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS, setRetryAfter } from "../../platform/http/retry-after.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import type { InvalidPaymentData, PaymentInProgress, SessionNotFound } from "../session/errors.ts"
import { isUnavailableItem } from "../session/readiness.ts"
import type { ReducerError } from "../session/session.ts"
import type { CheckoutCodec } from "../wire/acp/codec.ts"

const finalCode = (status: "completed" | "canceled" | "expired") => `session_${status}` as const

export type CheckoutFailure =
  | ReducerError
  | SessionNotFound
  | InvalidPaymentData
  | PaymentInProgress
  | PaymentDeclined
  | PaymentRejected
  | PaymentPending
  | StorageError

/** The API error each failure becomes; `Final` picks 409 (complete) or 405 (cancel) for a final session. */
export type ApiErrorOf<E, Final extends 405 | 409> = E extends {
  readonly _tag:
    | "UnknownProduct"
    | "UnknownFulfillmentOption"
    | "InvalidPaymentData"
    | "UnsupportedCurrency"
    | "NoCommonPaymentHandler"
    | "FulfillmentSelectionMismatch"
    | "AuthenticationResultRequired"
} ? BadRequest
  : E extends {
    readonly _tag:
      | "OutOfStock"
      | "SessionNotModifiable"
      | "SessionNotReady"
      | "PaymentRejected"
      | "DiscountUnavailable"
      | "PriceChanged"
  } ? Unprocessable
  : E extends { readonly _tag: "SessionNotFound" } ? NotFound
  : E extends { readonly _tag: "PaymentDeclined" } ? PaymentRequired
  : E extends { readonly _tag: "SessionFinal" } ? (Final extends 405 ? MethodNotAllowed : Conflict)
  : E extends { readonly _tag: "PaymentInProgress" | "FulfillmentAddressChanged" } ? Conflict
  : E extends { readonly _tag: "StorageError" } ? ServiceUnavailable | InternalError
  : E extends { readonly _tag: "PaymentPending" } ? Conflict | ServiceUnavailable
  : never

export const toApiError = (
  error: CheckoutFailure,
  codec: Pick<CheckoutCodec, "param" | "version">,
  final: 405 | 409 = 409
) => {
  const at = codec.param
  switch (error._tag) {
    case "UnknownProduct":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: `${at(`$.items[${error.index}].id`)} names no product of this merchant.`,
        param: at(`$.items[${error.index}].id`)
      })
    case "OutOfStock":
      return new Unprocessable({
        type: "invalid_request",
        code: "out_of_stock",
        message: error.available === 0
          ? `${error.productId} is out of stock.`
          : `Only ${error.available} of ${error.productId} available.`,
        param: at(`$.items[${error.index}]`)
      })
    case "UnknownFulfillmentOption":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: `${at("$.fulfillment_option_id")} must be one of the fulfillment options offered on the session.`,
        param: at("$.fulfillment_option_id")
      })
    case "UnsupportedCurrency":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: `This merchant sells in ${error.expected}, not ${error.currency}.`,
        param: "$.currency"
      })
    case "NoCommonPaymentHandler":
      return new BadRequest({
        type: "invalid_request",
        code: "unsupported",
        message: `None of the declared payment handlers is offered; this merchant offers ${error.offered.join(", ")}.`,
        param: "$.capabilities.payment.handlers"
      })
    case "FulfillmentSelectionMismatch":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: error.message,
        param: error.field === "type" ? "$.selected_fulfillment_options[0].type" : "$.selected_fulfillment_options"
      })
    case "AuthenticationResultRequired":
      return new BadRequest({
        type: "invalid_request",
        code: "requires_3ds",
        message:
          "This checkout session requires issuer authentication: complete it with the authentication_result of the authentication its authentication_metadata describes.",
        param: "$.authentication_result"
      })
    case "FulfillmentAddressChanged":
      return new Conflict({
        type: "invalid_request",
        code: "fulfillment_address_changed",
        message: "The fulfillment address differs from the session's: update the session, review it, then complete.",
        param: "$.fulfillment_details.address"
      })
    case "SessionNotModifiable":
      return new Unprocessable({
        type: "invalid_request",
        code: "session_not_modifiable",
        message: `The session is ${error.status} and can no longer be changed.`
      })
    case "PriceChanged":
      return new Unprocessable({
        type: "invalid_request",
        code: "price_changed",
        message:
          `The price of ${error.productId} changed since the session was priced (its total is now ${error.now}, was ${error.was}); nothing was charged. The session was re-priced: review the new total and complete again.`,
        param: `$.line_items[${error.index}]`
      })
    case "SessionNotReady": {
      const first = error.messages[0]
      if (first !== undefined && isUnavailableItem(first)) {
        return new Unprocessable({
          type: "invalid_request",
          code: "product_unavailable",
          message: `${first.content} Remove it from the session to complete.`,
          ...(first.param ? { param: at(first.param) } : {})
        })
      }
      const reason = first ? `: ${first.content}` : ""
      // A message's content is a sentence already: its own full stop ends this one too.
      const stop = /[.!?]$/.test(reason) ? "" : "."
      return new Unprocessable({
        type: "invalid_request",
        code: "session_not_ready",
        message: `The session is not ready for payment${reason}${stop} See the session's messages.`,
        ...(first?.param ? { param: at(first.param) } : {})
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
        message: `No checkout session ${maskCardNumbers(error.id)}.`,
        param: "$.checkout_session_id"
      })
    case "PaymentInProgress":
      return new Conflict({
        ...checkoutIdempotencyError(codec.version, "in_flight"),
        message: "Another payment for this checkout session is in progress; retry shortly."
      })
    case "InvalidPaymentData":
      return new BadRequest({
        type: "invalid_request",
        code: "invalid",
        message: error.message,
        param: at(error.param)
      })
    case "PaymentDeclined":
      return new PaymentRequired({ type: "processing_error", code: "payment_declined", message: error.message })
    case "PaymentRejected":
      return new Unprocessable({
        type: "invalid_request",
        code: "payment_declined",
        message: error.message,
        param: at(error.param)
      })
    case "DiscountUnavailable":
      return new Unprocessable({
        type: "invalid_request",
        code: error.rejected.reason,
        message:
          `${error.rejected.message} The session was re-priced without it; review the new total and complete again.`,
        param: error.rejected.index >= 0 ? `$.discounts.codes[${error.rejected.index}]` : "$.discounts"
      })
    case "PaymentPending":
      // The attempt stays pending: a retry of the complete resumes it under its key, never a second charge.
      return error.reason === "processing"
        ? new Conflict({
          ...checkoutIdempotencyError(codec.version, "in_flight"),
          message:
            "The payment provider is still processing this checkout session's payment; retry the complete shortly."
        })
        : new ServiceUnavailable({
          type: "service_unavailable",
          code: "service_unavailable",
          message:
            "The payment provider could not be reached; nothing was charged twice. Retry the complete with the same request."
        })
    case "StorageError":
      return error.reason === "unavailable" ? serviceUnavailable() : internalError()
  }
}

/** `final` is the status for an operation on a final session; storage failures are logged. */
export const mapCheckoutErrors = <A, E extends CheckoutFailure, R, Final extends 405 | 409 = 409>(
  effect: Effect.Effect<A, E, R>,
  codec: Pick<CheckoutCodec, "param" | "version">,
  final?: Final
): Effect.Effect<A, ApiErrorOf<E, Final>, R> =>
  effect.pipe(
    Effect.tapError((error) =>
      error._tag === "StorageError"
        ? Effect.logError("storage error", error.reason, error.cause)
        : error._tag === "PaymentInProgress"
        // The in-flight 409 says when to retry, like the idempotency middleware's own, and is not
        // kept under the request's key: the retry with that key runs again.
        ? Effect.zipRight(setRetryAfter(IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS), answerIsNotNow)
        : error._tag === "PaymentPending"
        // Neither answer is kept under the request's key (a 503 never is): the retry resumes the payment.
        ? Effect.zipRight(setRetryAfter(error.retryAfterSeconds), answerIsNotNow)
        : Effect.void
    ),
    Effect.mapError((error) => toApiError(error, codec, final ?? 409) as ApiErrorOf<E, Final>)
  )
