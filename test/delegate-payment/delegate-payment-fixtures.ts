/**
 * What the delegate payment request tests share: a valid request (test card 4242 4242 4242 4242,
 * cvc 737, an allowance expiring an hour after `NOW`), a way to vary it, the failures of decoding
 * and of semantic validation, and the check that a message carries no card data.
 */
import { expect } from "@effect/vitest"
import { Either } from "effect"
import { decodeDelegatePaymentRequest, parseDelegatePayment } from "../../src/delegate-payment/model/validation.ts"

export const NUMBER = "4242424242424242"
export const CVC = "737"
/** 2026-01-30T12:00:00Z, the time the requests are validated at. */
export const NOW = Date.parse("2026-01-30T12:00:00.000Z")

/** A valid request, every optional field present. */
export const validRequest = (): Record<string, any> => ({
  payment_method: {
    type: "card",
    card_number_type: "fpan",
    number: NUMBER,
    exp_month: "12",
    exp_year: "2027",
    name: "Jane Doe",
    cvc: CVC,
    checks_performed: ["avs", "cvv"],
    iin: "424242",
    display_card_funding_type: "credit",
    display_brand: "visa",
    display_last4: "4242",
    metadata: { issuing_bank: "test" },
    virtual: false
  },
  allowance: {
    reason: "one_time",
    max_amount: 2000,
    currency: "usd",
    checkout_session_id: "cs_123",
    merchant_id: "merchant_1",
    expires_at: "2026-01-30T13:00:00Z"
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
export const with_ = (mutate: (r: Record<string, any>) => void): Record<string, any> => {
  const r = validRequest()
  mutate(r)
  return r
}

/** The failure of decoding `input` (throws when it decodes). */
export const decodeFailure = (input: unknown) => {
  const result = decodeDelegatePaymentRequest(input)
  if (Either.isRight(result)) throw new Error("expected a decode failure")
  return result.left
}

/** The failure of validating `input` at `now` (throws when it is valid). */
export const semanticFailure = (input: unknown, now = NOW) => {
  const result = parseDelegatePayment(input, now)
  if (Either.isRight(result)) throw new Error("expected a validation failure")
  return result.left
}

/** `message` contains neither the card number nor the cvc, nor any of `secrets`. */
export const noCardData = (message: string, ...secrets: ReadonlyArray<string>) => {
  for (const secret of [NUMBER, CVC, ...secrets]) expect(message).not.toContain(secret)
}
