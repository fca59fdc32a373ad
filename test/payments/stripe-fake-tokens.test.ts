/**
 * The fake Stripe's shared payment granted tokens against the API reference ("Shared Payment Granted
 * Token": the object, retrieve, the create and revoke test helpers): usage limits, deactivation
 * (revoked, expired, consumed) and what confirming with an unusable token answers.
 */
import { describe, expect, it } from "@effect/vitest"
import Stripe from "stripe"
import { ManualClock } from "../support/stripe/clock.ts"
import { payWith, rejection, sdk, useFake } from "./stripe-fake-fixtures.ts"

const clock = new ManualClock(Date.UTC(2026, 10, 1))
const fake = useFake({ clock })
const nowSeconds = () => Math.floor(clock.now() / 1000)

describe("fake Stripe: shared payment granted tokens", () => {
  it("the test helper creates a token for a test PaymentMethod with usage_limits; retrieve shows it", async () => {
    const stripe = sdk(fake())
    const created: any = await stripe.rawRequest("POST", "/v1/test_helpers/shared_payment/granted_tokens", {
      payment_method: "pm_card_visa",
      usage_limits: { currency: "usd", max_amount: 10000, expires_at: nowSeconds() + 3600 },
      shared_metadata: { agent: "test" }
    })
    expect(created.id).toMatch(/^spt_/)
    expect(created).toMatchObject({
      object: "shared_payment.granted_token",
      deactivated_at: null,
      deactivated_reason: null,
      livemode: false,
      payment_method_details: { type: "card", card: { brand: "visa", last4: "4242" } },
      shared_metadata: { agent: "test" },
      usage_details: { amount_captured: { value: 0, currency: "usd" } },
      usage_limits: { currency: "usd", max_amount: 10000, expires_at: nowSeconds() + 3600 }
    })
    const retrieved = await stripe.rawRequest("GET", `/v1/shared_payment/granted_tokens/${created.id}`)
    expect(retrieved).toMatchObject({ id: created.id })
    const missing = await rejection(stripe.rawRequest("GET", "/v1/shared_payment/granted_tokens/spt_missing"))
    expect(missing).toMatchObject({ statusCode: 404, code: "resource_missing" })
  })

  it("a token made from a declining test PaymentMethod declines", async () => {
    const stripe = sdk(fake())
    const token: any = await stripe.rawRequest("POST", "/v1/test_helpers/shared_payment/granted_tokens", {
      payment_method: "pm_card_visa_chargeDeclinedInsufficientFunds",
      usage_limits: { currency: "usd", max_amount: 10000 }
    })
    const error = await rejection(stripe.paymentIntents.create(payWith(token.id, 1000)))
    expect(error).toMatchObject({ type: "StripeCardError", decline_code: "insufficient_funds" })
    const unknown = await rejection(stripe.rawRequest("POST", "/v1/test_helpers/shared_payment/granted_tokens", {
      payment_method: "pm_nope",
      usage_limits: { currency: "usd", max_amount: 10000 }
    }))
    expect(unknown).toMatchObject({ code: "resource_missing", param: "payment_method" })
  })

  it("a revoked token cannot pay", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken()
    const revoked: any = await stripe.rawRequest(
      "POST",
      `/v1/test_helpers/shared_payment/granted_tokens/${token.id}/revoke`,
      {}
    )
    expect(revoked).toMatchObject({ deactivated_reason: "revoked", deactivated_at: nowSeconds() })
    const error = await rejection(stripe.paymentIntents.create(payWith(token.id, 1000)))
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(error).toMatchObject({
      code: "payment_method_unexpected_state",
      param: "payment_method_data[shared_payment_granted_token]"
    })
  })

  it("a token past its expires_at is deactivated as expired", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ expiresAt: nowSeconds() + 60 })
    const created = await stripe.paymentIntents.create({
      amount: 1000,
      currency: "usd",
      payment_method_data: payWith(token.id, 0).payment_method_data!
    })
    clock.advance(61_000)
    const error = await rejection(stripe.paymentIntents.confirm(created.id))
    expect(error.code).toBe("payment_method_unexpected_state")
    expect(error.payment_intent.id).toBe(created.id)
    const expired: any = await stripe.rawRequest("GET", `/v1/shared_payment/granted_tokens/${token.id}`)
    expect(expired).toMatchObject({ deactivated_reason: "expired", deactivated_at: token.usage_limits.expires_at })
  })

  it("max_amount bounds the sum of captures; reaching it consumes the token", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ maxAmount: 5000 })
    const over = await rejection(stripe.paymentIntents.create(payWith(token.id, 5001)))
    expect(over).toMatchObject({ code: "amount_too_large", param: "amount" })
    await stripe.paymentIntents.create(payWith(token.id, 3000))
    const rest = await rejection(stripe.paymentIntents.create(payWith(token.id, 2500)))
    expect(rest.code).toBe("amount_too_large")
    await stripe.paymentIntents.create(payWith(token.id, 2000))
    const consumed: any = await stripe.rawRequest("GET", `/v1/shared_payment/granted_tokens/${token.id}`)
    expect(consumed).toMatchObject({
      deactivated_reason: "consumed",
      usage_details: { amount_captured: { value: 5000 } }
    })
    const after = await rejection(stripe.paymentIntents.create(payWith(token.id, 100)))
    expect(after.code).toBe("payment_method_unexpected_state")
  })

  it("a processing payment holds its amount against max_amount until it settles", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "processing", maxAmount: 1000 })
    const pending = await stripe.paymentIntents.create(payWith(token.id, 1000))
    expect((await rejection(stripe.paymentIntents.create(payWith(token.id, 100)))).code).toBe("amount_too_large")
    fake().settleProcessing(pending.id, "failed")
    expect((await stripe.paymentIntents.create(payWith(token.id, 100))).status).toBe("processing")
  })

  it("another currency than the token's usage limit is refused", async () => {
    const token = fake().grantToken({ currency: "eur" })
    const error = await rejection(sdk(fake()).paymentIntents.create(payWith(token.id, 1000)))
    expect(error).toMatchObject({ code: "payment_intent_invalid_parameter", param: "currency" })
  })

  it("an unknown token is resource_missing", async () => {
    const error = await rejection(sdk(fake()).paymentIntents.create(payWith("spt_unknown", 1000)))
    expect(error).toMatchObject({ statusCode: 400, code: "resource_missing" })
  })
})
