/**
 * Stripe and the start-up: a merchant catalog naming a Stripe handler refuses to start in production
 * without STRIPE_SECRET_KEY; the demo catalog's Stripe handler is offered only with a key.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { clientOf, createRequest } from "../support/acp-fixtures.ts"
import { testApp } from "../support/http.ts"
import { stripeConfig, useFakeStripe } from "./stripe-checkout-fixtures.ts"

const fake = useFakeStripe()

const handlerIds = Effect.map(
  clientOf("2026-04-17").created(createRequest("2026-04-17")),
  (created) => created.capabilities.payment.handlers.map((handler: { id: string }) => handler.id)
)

describe("Stripe configuration", () => {
  it.effect("production, a catalog file with a Stripe handler, no key: the start fails naming STRIPE_SECRET_KEY", () =>
    Effect.gen(function*() {
      const started = yield* Effect.exit(Effect.scoped(Layer.build(
        testApp({ config: { production: true, catalogFile: Option.some("/merchant/catalog.json") } })
      )))
      expect(Exit.isFailure(started)).toBe(true)
      const why = Exit.isFailure(started) ? Cause.pretty(started.cause) : ""
      expect(why).toContain("STRIPE_SECRET_KEY")
      expect(why).toContain("stripe_spt")
    }))

  it.effect("production with the key starts and offers the handler", () =>
    Effect.gen(function*() {
      expect(yield* handlerIds).toEqual(["card_tokenized", "stripe_spt"])
      yield* CheckoutService
    }).pipe(Effect.provide(testApp({
      config: { ...stripeConfig(fake()), production: true, catalogFile: Option.some("/merchant/catalog.json") }
    }))))

  it.effect("the demo catalog without a key, even in production: started, the Stripe handler not offered", () =>
    Effect.gen(function*() {
      expect(yield* handlerIds).toEqual(["card_tokenized"])
    }).pipe(Effect.provide(testApp({ config: { production: true } }))))
})
