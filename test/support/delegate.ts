/**
 * Delegate payment fixtures: a valid request (test card 4242 4242 4242 4242, cvc 987) and helpers
 * to vary it.
 */
import { Effect, Either, Layer } from "effect"
import { parseDelegatePayment, type ValidatedDelegatePayment } from "../../src/delegate-payment/model/validation.ts"
import { PaymentProvider, type PaymentProviderService } from "../../src/payments/payment-provider.ts"

export const CARD_NUMBER = "4242424242424242"
export const CARD_CVC = "987"
export const DELEGATE_PATH = "/agentic_commerce/delegate_payment"

/** 2026-01-30T12:00:00Z, the time most delegate tests run at. */
export const NOW = Date.parse("2026-01-30T12:00:00.000Z")

export type Json = Record<string, any>

export const validDelegateRequest = (): Json => ({
  payment_method: {
    type: "card",
    card_number_type: "fpan",
    number: CARD_NUMBER,
    exp_month: "12",
    exp_year: "2030",
    name: "Jane Doe",
    cvc: CARD_CVC,
    checks_performed: ["avs", "cvv"],
    iin: "424242",
    display_card_funding_type: "credit",
    display_brand: "visa",
    display_last4: "4242",
    metadata: { issuing_bank: "test" }
  },
  allowance: {
    reason: "one_time",
    max_amount: 2000,
    currency: "usd",
    checkout_session_id: "cs_123",
    merchant_id: "merchant_test",
    expires_at: "2099-01-30T13:00:00Z"
  },
  billing_address: {
    name: "Jane Doe",
    line_one: "1 Main St",
    city: "Springfield",
    state: "IL",
    country: "US",
    postal_code: "62701"
  },
  risk_signals: [{ type: "card_testing", score: 10, action: "authorized" }],
  metadata: { source: "agent" }
})

/** A valid request changed by `mutate`. */
export const delegateRequestWith = (mutate: (request: Json) => void): Json => {
  const request = validDelegateRequest()
  mutate(request)
  return request
}

/** The validated form of `request` at `now` (throws when it is not valid). */
export const validated = (request: Json = validDelegateRequest(), now = NOW): ValidatedDelegatePayment => {
  const result = parseDelegatePayment(request, now)
  if (Either.isLeft(result)) throw new Error(`invalid fixture: ${result.left.error.message}`)
  return result.right
}

/** No payment is made on the delegate route: any use of the provider is a defect. */
export const NoPayments = Layer.succeed(
  PaymentProvider,
  new Proxy({}, { get: () => () => Effect.dieMessage("the delegate route makes no payment") }) as PaymentProviderService
)
