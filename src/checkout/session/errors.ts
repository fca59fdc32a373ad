/** Failures of the checkout use cases besides the reducer's (those are in `session.ts`). */
import { Data } from "effect"

export class SessionNotFound extends Data.TaggedError("SessionNotFound")<{ readonly id: string }> {}

/** `payment_data` names a handler or provider this merchant does not offer → 400 invalid. */
export class InvalidPaymentData extends Data.TaggedError("InvalidPaymentData")<{
  readonly param: string
  readonly message: string
}> {}

/**
 * Another payment of this session is under way (a concurrent complete with another credential,
 * or one whose outcome is not stored yet) → 409 idempotency_in_flight; retry shortly.
 */
export class PaymentInProgress extends Data.TaggedError("PaymentInProgress")<{ readonly sessionId: string }> {}
