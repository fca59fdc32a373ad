/**
 * One try at paying for a session, committed before the charge under a key every retry of the try
 * reuses, so that the provider returns the first charge instead of making a second.
 */
export interface PaymentAttempt {
  readonly sessionId: string
  /** 1 for the session's first try, +1 after each one that did not succeed. */
  readonly sequence: number
  /** `<session id>:<sequence>`: what the provider dedupes charges by. */
  readonly idempotencyKey: string
  readonly amount: number
  readonly currency: string
  /** Non-secret reference of the credential (a `vt_` token id or a test token name). */
  readonly credentialRef: string
  readonly state: "pending" | "succeeded" | "declined"
  readonly chargeId: string | undefined
  /** Epoch ms, as `updatedAt`. */
  readonly createdAt: number
  readonly updatedAt: number
}
