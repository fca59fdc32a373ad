/**
 * What confirming a payment method does in the fake. Stripe's test PaymentMethods choose the outcome
 * (Testing, "Test cards": `pm_card_visa` succeeds, `pm_card_visa_chargeDeclinedInsufficientFunds`
 * is declined with `insufficient_funds`, `pm_card_authenticationRequired` needs 3-D Secure, …);
 * the fake knows those ids and adds `pm_fake_processing`, since no card test method stays in
 * `processing` (assumption: a fake-only id, never sent to real Stripe).
 */

export type Behavior =
  | { readonly kind: "succeeds" }
  | { readonly kind: "declines"; readonly declineCode: string }
  | { readonly kind: "requires_action" }
  | { readonly kind: "processing" }

interface Card {
  readonly brand: string
  readonly last4: string
}

interface TestMethod {
  readonly behavior: Behavior
  readonly card: Card
}

const visa = (last4: string): Card => ({ brand: "visa", last4 })
const declines = (declineCode: string): Behavior => ({ kind: "declines", declineCode })

export const TEST_PAYMENT_METHODS: Readonly<Record<string, TestMethod>> = {
  pm_card_visa: { behavior: { kind: "succeeds" }, card: visa("4242") },
  pm_card_mastercard: { behavior: { kind: "succeeds" }, card: { brand: "mastercard", last4: "4444" } },
  pm_card_visa_chargeDeclined: { behavior: declines("generic_decline"), card: visa("0002") },
  pm_card_chargeDeclined: { behavior: declines("generic_decline"), card: visa("0002") },
  pm_card_visa_chargeDeclinedInsufficientFunds: { behavior: declines("insufficient_funds"), card: visa("9995") },
  pm_card_chargeDeclinedInsufficientFunds: { behavior: declines("insufficient_funds"), card: visa("9995") },
  pm_card_visa_chargeDeclinedLostCard: { behavior: declines("lost_card"), card: visa("9987") },
  pm_card_visa_chargeDeclinedStolenCard: { behavior: declines("stolen_card"), card: visa("9979") },
  pm_card_chargeDeclinedFraudulent: { behavior: declines("fraudulent"), card: visa("0019") },
  pm_card_chargeDeclinedExpiredCard: { behavior: declines("expired_card"), card: visa("0069") },
  pm_card_chargeDeclinedIncorrectCvc: { behavior: declines("incorrect_cvc"), card: visa("0127") },
  pm_card_authenticationRequired: { behavior: { kind: "requires_action" }, card: visa("3184") },
  pm_card_threeDSecure2Required: { behavior: { kind: "requires_action" }, card: visa("3220") },
  pm_fake_processing: { behavior: { kind: "processing" }, card: visa("4242") }
}

/** The test PaymentMethod a behavior stands for (what a token made by `grantToken` points at). */
export const paymentMethodFor = (behavior: Behavior): string => {
  for (const [id, method] of Object.entries(TEST_PAYMENT_METHODS)) {
    if (method.behavior.kind !== behavior.kind) continue
    if (behavior.kind !== "declines") return id
    if (method.behavior.kind === "declines" && method.behavior.declineCode === behavior.declineCode) return id
  }
  return behavior.kind === "declines" ? "pm_card_visa_chargeDeclined" : "pm_card_visa"
}

export interface Decline {
  readonly code: string
  readonly declineCode: string
  readonly message: string
}

/**
 * The error a decline answers with (Declines, "Issuer declines" and the error codes page): most
 * issuer reasons are `code: card_declined` with the reason as `decline_code`; an expired card or a
 * wrong CVC has its own code. `card_declined` as a reason means the generic decline.
 */
export const declineOf = (reason: string): Decline => {
  const declineCode = reason === "card_declined" ? "generic_decline" : reason
  switch (declineCode) {
    case "insufficient_funds":
      return { code: "card_declined", declineCode, message: "Your card has insufficient funds." }
    case "expired_card":
      return { code: "expired_card", declineCode, message: "Your card has expired." }
    case "incorrect_cvc":
      return { code: "incorrect_cvc", declineCode, message: "Your card's security code is incorrect." }
    default:
      return { code: "card_declined", declineCode, message: "Your card was declined." }
  }
}
