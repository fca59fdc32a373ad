/** Failures of the checkout use cases besides the reducer's (those are in `session.ts`). */
import { Data } from "effect"

export class SessionNotFound extends Data.TaggedError("SessionNotFound")<{ readonly id: string }> {}

export class InvalidPaymentData extends Data.TaggedError("InvalidPaymentData")<{
  readonly param: string
  readonly message: string
}> {}

/** Another payment of this session is under way, or its outcome not stored yet: retry shortly. */
export class PaymentInProgress extends Data.TaggedError("PaymentInProgress")<{ readonly sessionId: string }> {}
