/**
 * The checkout's failures in UCP's terms. Business outcomes (an unknown or unavailable item, a declined
 * payment, a changed price, a session not ready) are UCP responses with HTTP 200 and `messages`, the
 * failed operation changing nothing; protocol errors keep their status in the common envelope, which
 * the edge gives UCP's shape (`error-shape.ts`).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { CompleteError } from "../../checkout/checkout-service.ts"
import type { PaymentInProgress, SessionNotFound } from "../../checkout/session/errors.ts"
import type { ReducerError, SessionFinal } from "../../checkout/session/session.ts"
import type { StorageError } from "../../db/storage-error.ts"
import { answerIsNotNow } from "../../idempotency/idempotent-answer.ts"
import {
  BadRequest,
  Conflict,
  type InternalError,
  internalError,
  NotFound,
  type ServiceUnavailable,
  serviceUnavailable,
  Unprocessable
} from "../../platform/http/errors.ts"
import { IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS, setRetryAfter } from "../../platform/http/retry-after.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { ucpPath } from "../wire/ucp/v2026-04-08/checkout-responses.ts"
import { outcomeWithoutResource } from "./negotiation.ts"

export type UcpCheckoutFailure =
  | ReducerError
  | CompleteError
  | SessionFinal
  | PaymentInProgress
  | SessionNotFound
  | StorageError

type Severity = "recoverable" | "requires_buyer_input" | "requires_buyer_review" | "unrecoverable"

const error = (code: string, content: string, severity: Severity, path?: string) => ({
  type: "error",
  code,
  ...(path === undefined ? {} : { path }),
  content,
  severity
})

/** What a failed operation answers; `creating`: no session exists to act on (unrecoverable outcomes). */
export type UcpProtocolError = BadRequest | NotFound | Conflict | Unprocessable | ServiceUnavailable | InternalError

export const failureAnswer = (
  failure: UcpCheckoutFailure,
  capabilities: Readonly<Record<string, ReadonlyArray<{ readonly version: string }>>>,
  creating: boolean
): Effect.Effect<HttpServerResponse.HttpServerResponse, UcpProtocolError> => {
  const outcome = (code: string, content: string, path?: string) =>
    Effect.succeed(
      outcomeWithoutResource(capabilities, [error(code, content, creating ? "unrecoverable" : "recoverable", path)])
    )
  switch (failure._tag) {
    case "UnknownProduct":
      return outcome(
        "item_unavailable",
        `${failure.productId} is not sold by this merchant.`,
        `$.line_items[${failure.index}].item.id`
      )
    case "OutOfStock":
      return outcome(
        "out_of_stock",
        failure.available === 0
          ? `${failure.productId} is out of stock.`
          : `Only ${failure.available} of ${failure.productId} are available.`,
        `$.line_items[${failure.index}].quantity`
      )
    case "PriceChanged":
      return outcome(
        "price_changed",
        `The price of ${failure.productId} changed since the session was priced (its total is now ${failure.now}, was ${failure.was}); nothing was charged. Review the session and complete again.`,
        `$.line_items[${failure.index}]`
      )
    case "SessionNotReady": {
      const first = failure.messages[0]
      return outcome(
        "checkout_not_ready",
        `The checkout is not ready to complete${first ? `: ${first.content}` : "."}`,
        first?.param === undefined ? undefined : ucpPath(first.param)
      )
    }
    case "PaymentDeclined":
      return outcome("payment_failed", failure.message, "$.payment.instruments[0]")
    case "PaymentRejected":
      return outcome("payment_failed", failure.message, ucpPath(failure.param ?? "$.payment_data"))
    case "DiscountUnavailable":
      return Effect.succeed(outcomeWithoutResource(capabilities, [{
        type: "warning",
        code: failure.rejected.reason,
        path: failure.rejected.index >= 0 ? `$.discounts.codes[${failure.rejected.index}]` : "$.discounts",
        content: `${failure.rejected.message} The session was re-priced without it; review it and complete again.`
      }]))
    case "AuthenticationResultRequired":
      return outcome(
        "payment_failed",
        "The card's issuer asks for 3-D Secure, which this binding does not carry: pay with another card.",
        "$.payment.instruments[0]"
      )
    case "InvalidPaymentData":
      return Effect.fail(
        new BadRequest({
          type: "invalid_request",
          code: "invalid",
          message: failure.message,
          param: ucpPath(failure.param)
        })
      )
    case "UnknownFulfillmentOption":
      return Effect.fail(
        new BadRequest({
          type: "invalid_request",
          code: "invalid",
          message: "The selected option is not one the session offers.",
          param: "$.fulfillment.methods[0].groups[0].selected_option_id"
        })
      )
    case "UnsupportedCurrency":
      return Effect.fail(
        new BadRequest({
          type: "invalid_request",
          code: "invalid",
          message: `This merchant sells in ${failure.expected.toUpperCase()}.`,
          param: "$.context.currency"
        })
      )
    case "NoCommonPaymentHandler":
    case "FulfillmentSelectionMismatch":
    case "FulfillmentAddressChanged":
      // UCP requests never declare handlers, selections by type or an address at complete.
      return Effect.fail(internalError())
    case "SessionNotModifiable":
      return Effect.fail(
        new Unprocessable({
          type: "invalid_request",
          code: "session_not_modifiable",
          message: `The checkout session is ${failure.status}: it can no longer be changed.`
        })
      )
    case "SessionFinal":
      return Effect.fail(
        new Conflict({
          type: "invalid_request",
          code: failure.status === "completed"
            ? "session_completed"
            : failure.status === "canceled"
            ? "session_canceled"
            : "session_expired",
          message: `The checkout session is ${failure.status}: it can no longer be changed.`
        })
      )
    case "SessionNotFound":
      return Effect.fail(
        new NotFound({
          type: "invalid_request",
          code: "not_found",
          message: `No checkout session ${maskCardNumbers(failure.id)}.`,
          param: "$.id"
        })
      )
    case "PaymentInProgress":
      // Not kept under the request's key: the retry with that key runs again.
      return Effect.zipRight(
        Effect.zipRight(setRetryAfter(IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS), answerIsNotNow),
        Effect.fail(
          new Conflict({
            type: "invalid_request",
            code: "idempotency_in_flight",
            message: "Another payment for this checkout session is in progress; retry shortly."
          })
        )
      )
    case "PaymentPending":
      // The attempt stays pending: a retry of the complete resumes it under its key, never a second charge.
      return Effect.zipRight(
        Effect.zipRight(setRetryAfter(failure.retryAfterSeconds), answerIsNotNow),
        Effect.fail(
          failure.reason === "processing"
            ? new Conflict({
              type: "invalid_request",
              code: "idempotency_in_flight",
              message: "The payment provider is still processing this payment; retry the complete shortly."
            })
            : serviceUnavailable()
        )
      )
    case "StorageError":
      return Effect.zipRight(
        Effect.logError("storage error", failure.reason, failure.cause),
        Effect.fail(failure.reason === "unavailable" ? serviceUnavailable() : internalError())
      )
  }
}
