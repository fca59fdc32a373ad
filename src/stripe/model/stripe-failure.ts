/**
 * How a Stripe call fails, classified from the SDK's error (its `type`, status, code and headers) so
 * that the provider decides on these tags alone. No message of an authentication error is kept: Stripe
 * quotes part of the key in it.
 */
import { Data } from "effect"

/** The issuer or Stripe's risk checks declined the card (HTTP 402, `card_error`). */
export class StripeCardError extends Data.TaggedError("StripeCardError")<{
  readonly code: string | undefined
  readonly declineCode: string | undefined
  readonly message: string
  /** The PaymentIntent the decline left, when Stripe names it. */
  readonly paymentIntentId: string | undefined
}> {}

/** Stripe refused the request as made (400/404, `invalid_request_error`): an expired token, a missing object. */
export class StripeRequestRefused extends Data.TaggedError("StripeRequestRefused")<{
  readonly statusCode: number | undefined
  readonly code: string | undefined
  readonly param: string | undefined
  readonly message: string
}> {}

/** The idempotency key was used with other parameters, or its first request is still running (`idempotency_error`). */
export class StripeIdempotencyConflict extends Data.TaggedError("StripeIdempotencyConflict")<{
  readonly message: string
}> {}

/** Unreachable, timed out, 5xx or 429 after the SDK's retries: the outcome is unknown, the call may be repeated. */
export class StripeUnavailable extends Data.TaggedError("StripeUnavailable")<{
  readonly reason: string
  /** Stripe's `Retry-After`, in seconds, when it sent one. */
  readonly retryAfterSeconds: number | undefined
}> {}

/** The key is wrong or lacks a permission (401/403): the merchant's configuration, not the buyer's payment. */
export class StripeMisconfigured extends Data.TaggedError("StripeMisconfigured")<{
  readonly statusCode: number | undefined
}> {}

export type StripeFailure =
  | StripeCardError
  | StripeRequestRefused
  | StripeIdempotencyConflict
  | StripeUnavailable
  | StripeMisconfigured

interface SdkErrorFields {
  readonly type?: unknown
  readonly statusCode?: unknown
  readonly code?: unknown
  readonly decline_code?: unknown
  readonly param?: unknown
  readonly message?: unknown
  readonly headers?: unknown
  readonly raw?: unknown
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const retryAfter = (headers: unknown): number | undefined => {
  if (typeof headers !== "object" || headers === null) return undefined
  const value = (headers as Record<string, unknown>)["retry-after"]
  const seconds = typeof value === "string" ? Number(value) : NaN
  return Number.isInteger(seconds) && seconds >= 0 ? seconds : undefined
}

const paymentIntentOf = (raw: unknown): string | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const intent = (raw as Record<string, unknown>).payment_intent
  return typeof intent === "object" && intent !== null ? text((intent as Record<string, unknown>).id) : undefined
}

/** Any rejection of an SDK call; what is not a Stripe error (a bug of ours) is unavailable, never a decline. */
export const classifyStripeError = (error: unknown): StripeFailure => {
  const fields: SdkErrorFields = typeof error === "object" && error !== null ? error : {}
  const statusCode = typeof fields.statusCode === "number" ? fields.statusCode : undefined
  const message = text(fields.message) ?? "Stripe did not say why."
  switch (fields.type) {
    case "StripeCardError":
      return new StripeCardError({
        code: text(fields.code),
        declineCode: text(fields.decline_code),
        message,
        paymentIntentId: paymentIntentOf(fields.raw)
      })
    case "StripeInvalidRequestError":
      return new StripeRequestRefused({ statusCode, code: text(fields.code), param: text(fields.param), message })
    case "StripeIdempotencyError":
      return new StripeIdempotencyConflict({ message })
    case "StripeAuthenticationError":
    case "StripePermissionError":
      return new StripeMisconfigured({ statusCode })
    case "StripeRateLimitError":
      return new StripeUnavailable({ reason: "rate limited (429)", retryAfterSeconds: retryAfter(fields.headers) })
    case "StripeConnectionError":
      return new StripeUnavailable({ reason: "unreachable", retryAfterSeconds: undefined })
    case "StripeAPIError":
      return new StripeUnavailable({
        reason: `server error (${statusCode ?? "no status"})`,
        retryAfterSeconds: retryAfter(fields.headers)
      })
    default:
      // A 409 `lock_timeout` arrives as an invalid request with that code; it is a busy Stripe.
      return new StripeUnavailable({
        reason: `unexpected failure (${String(fields.type ?? "no type")})`,
        retryAfterSeconds: undefined
      })
  }
}
