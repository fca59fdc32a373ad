/** Whether a vault token may pay for a checkout session (CONTRACT §7); the caller reads the token and the clock. */
import { Either } from "effect"

export interface AllowanceView {
  readonly max_amount: number
  readonly currency: string
  readonly checkout_session_id: string
  readonly merchant_id: string
  /** Epoch ms. */
  readonly expiresAt: number
}

export interface TokenView {
  readonly id: string
  readonly allowance: AllowanceView
  /** `active`: usable; `used`: spent (or held by a payment in progress) for `usedBySession`. */
  readonly state: "active" | "used"
  readonly usedBySession: string | undefined
}

export interface PaymentAttemptContext {
  readonly merchantId: string
  readonly sessionId: string
  readonly currency: string
  readonly amount: number
  readonly now: number
}

export type AllowanceViolationReason =
  | "token_not_found"
  | "token_used"
  | "merchant_mismatch"
  | "session_mismatch"
  | "currency_mismatch"
  | "amount_exceeds_allowance"
  | "allowance_expired"

export interface AllowanceViolation {
  readonly reason: AllowanceViolationReason
  readonly message: string
}

const violation = (reason: AllowanceViolationReason, message: string) =>
  Either.left<AllowanceViolation>({ reason, message })

export const checkAllowance = (
  token: TokenView | undefined,
  context: PaymentAttemptContext
): Either.Either<void, AllowanceViolation> => {
  if (token === undefined) return violation("token_not_found", "The payment token does not exist.")
  // A token held by this very session is a retry of its own payment, not a second use.
  if (token.state === "used" && token.usedBySession !== context.sessionId) {
    return violation("token_used", "The payment token has already been used.")
  }
  const allowance = token.allowance
  if (allowance.merchant_id !== context.merchantId) {
    return violation("merchant_mismatch", "The payment token is not valid for this merchant.")
  }
  if (allowance.checkout_session_id !== context.sessionId) {
    return violation("session_mismatch", "The payment token was issued for another checkout session.")
  }
  if (allowance.currency !== context.currency) {
    return violation(
      "currency_mismatch",
      `The payment token allows ${allowance.currency.toUpperCase()}, the checkout is in ${context.currency.toUpperCase()}.`
    )
  }
  if (context.amount > allowance.max_amount) {
    return violation(
      "amount_exceeds_allowance",
      `The checkout total ${context.amount} exceeds the token's allowance of ${allowance.max_amount}.`
    )
  }
  if (context.now >= allowance.expiresAt) return violation("allowance_expired", "The payment token has expired.")
  return Either.void
}
