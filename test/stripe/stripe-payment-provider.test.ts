/**
 * The Stripe provider on its own, against the fake Stripe: the settlement of a key no request got to
 * Stripe with closes it, so that a request stalled until then is refused and creates nothing; a
 * settlement never confirms.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { VOIDED_KEY_MESSAGE } from "../../src/payments/builtin-payment-processor.ts"
import type { ChargeRequest } from "../../src/payments/model/payment.ts"
import { AppConfig } from "../../src/platform/config.ts"
import { SdkStripeClient } from "../../src/stripe/http/sdk-stripe-client.ts"
import { StripePaymentProvider, StripePayments } from "../../src/stripe/stripe-payment-provider.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryStripePaymentStore } from "../doubles/memory-stripe-payment-store.ts"
import { testConfig } from "../support/test-config.ts"
import { intentsOf, stripeConfig, useFakeStripe } from "./stripe-checkout-fixtures.ts"

const fake = useFakeStripe()

const provider = () =>
  StripePaymentProvider.pipe(
    Layer.provide(SdkStripeClient),
    Layer.provide(MemoryStripePaymentStore),
    Layer.provide(freshMemoryDatabase),
    Layer.provide(Layer.succeed(AppConfig, testConfig(stripeConfig(fake()))))
  )

let counter = 0
const requestFor = (token: string): ChargeRequest => {
  const sessionId = `cs_provider_${Date.now()}_${++counter}`
  return {
    sessionId,
    amount: 1400,
    currency: "usd",
    credential: { kind: "legacy", provider: "stripe", token },
    idempotencyKey: `${sessionId}:1`
  }
}
const pendingOf = (request: ChargeRequest) => ({ ...request, credentialRef: request.credential.token })

describe("StripePayments", () => {
  it.effect("settling a key with no row closes it: a late charge is refused, no PaymentIntent made", () =>
    Effect.gen(function*() {
      const stripe = yield* StripePayments
      const request = requestFor(fake().grantToken().id)
      expect(yield* stripe.settleCharge(pendingOf(request))).toEqual(Option.none())
      const late = yield* Effect.flip(stripe.charge(request))
      expect([late._tag, late.message]).toEqual(["PaymentRejected", VOIDED_KEY_MESSAGE])
      expect(intentsOf(fake(), request.sessionId)).toHaveLength(0)
      expect(yield* stripe.settleCharge(pendingOf(request))).toEqual(Option.none())
    }).pipe(Effect.provide(provider())))

  it.effect("a charge then its settlement: the settlement reads the same PaymentIntent, never a second", () =>
    Effect.gen(function*() {
      const stripe = yield* StripePayments
      const request = requestFor(fake().grantToken().id)
      const charged = yield* stripe.charge(request)
      expect(charged.id).toMatch(/^pi_/)
      const settled = yield* stripe.settleCharge(pendingOf(request))
      expect(Option.map(settled, Either.map((charge) => charge.id))).toEqual(Option.some(Either.right(charged.id)))
      expect(yield* stripe.charge(request)).toEqual(charged)
      expect(intentsOf(fake(), request.sessionId)).toHaveLength(1)
    }).pipe(Effect.provide(provider())))

  it.effect("a declined charge, settled: the decline again, the PaymentIntent canceled once", () =>
    Effect.gen(function*() {
      const stripe = yield* StripePayments
      const request = requestFor(fake().grantToken({ behavior: "declines", declineCode: "generic_decline" }).id)
      const declined = yield* Effect.flip(stripe.charge(request))
      expect(declined).toMatchObject({
        _tag: "PaymentDeclined",
        reason: "card_declined",
        declineCode: "generic_decline"
      })
      expect(intentsOf(fake(), request.sessionId).map((pi) => pi.status)).toEqual(["canceled"])
      expect(yield* stripe.settleCharge(pendingOf(request))).toEqual(Option.none())
    }).pipe(Effect.provide(provider())))
})
