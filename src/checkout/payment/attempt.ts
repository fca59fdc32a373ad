/**
 * One try at paying for a session. Recorded, and committed, before the provider is called, with a
 * provider idempotency key that is the same for every retry of this try: a crash between the
 * charge and the completing step is recovered by calling the provider again with the same key,
 * which returns the first charge instead of making a second.
 */
export interface PaymentAttempt {
  readonly sessionId: string
  /** 1 for the first try of the session, +1 after each declined or rejected one. */
  readonly sequence: number
  /** `<session id>:<sequence>`: what the provider dedupes charges by. */
  readonly idempotencyKey: string
  readonly amount: number
  readonly currency: string
  /** Non-secret reference of the credential (a `vt_` token id or a test token name). */
  readonly credentialRef: string
  readonly state: "pending" | "succeeded" | "declined"
  readonly chargeId: string | undefined
  /** Epoch milliseconds. */
  readonly createdAt: number
  readonly updatedAt: number
}
