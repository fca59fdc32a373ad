/**
 * Refunds through Stripe on every store (memory, embedded PGlite, PostgreSQL when `TEST_DATABASE_URL`
 * is set): concurrent refunds of one order are each refunded and recorded once, and a refund whose
 * answers were all lost is refunded once when the client retries with its key.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { OrderStore } from "../../src/orders/order-store.ts"
import { post, testApp } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import { createStripeOrder, stripeConfig } from "../support/stripe-orders.ts"
import { FakeStripe } from "../support/stripe/fake-stripe.ts"

let fake: FakeStripe
beforeAll(async () => {
  fake = await FakeStripe.start()
})
afterAll(async () => {
  await fake.stop()
})

const refund = (orderId: string, amount: number, key: string) =>
  post(`/orders/${orderId}/refunds`, { type: "original_payment", amount }, { headers: { "idempotency-key": key } })

const stripeRefunds = (intentId: string) =>
  fake.refunds().filter((r) => r.payment_intent === intentId).map((r) => r.amount).sort((a, b) => a - b)

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`Stripe refunds: ${store.name}`, () => {
    store.register()
    const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(store.freshStores, (stores) =>
        Effect.provide(
          effect,
          testApp({ ...stores, config: stripeConfig(fake) }) as Layer.Layer<any>
        )) as Effect.Effect<A, E, never>

    it.live("six refunds of one order at once: six Stripe refunds, six adjustments, the total counted once", () =>
      run(Effect.gen(function*() {
        const { intent, order } = yield* createStripeOrder(fake)
        yield* post(`/orders/${order.id}/confirm`)
        const amounts = [100, 200, 300, 400, 500, 600]
        const answers = yield* Effect.all(amounts.map((amount, i) => refund(order.id, amount, `many-${i}`)), {
          concurrency: "unbounded"
        })
        expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200))
        expect(stripeRefunds(intent.id)).toEqual(amounts)
        const stored = Option.getOrThrow(yield* (yield* OrderStore).getOrder(order.id)).order
        expect(stored.adjustments.map((a) => a.id)).toEqual(["adj_1", "adj_2", "adj_3", "adj_4", "adj_5", "adj_6"])
        expect(stored.refunds.map((r) => r.amount).sort((a, b) => a - b)).toEqual(amounts)
        expect(stored.totals.find((t) => t.type === "amount_refunded")?.amount).toBe(2100)
        // Every one retried: answered as before, nothing more at Stripe.
        yield* Effect.all(amounts.map((amount, i) => refund(order.id, amount, `many-${i}`)), {
          concurrency: "unbounded"
        })
        expect(stripeRefunds(intent.id)).toEqual(amounts)
      })))

    it.live("every answer lost: 503 and nothing written; the retry with the key refunds once", () =>
      run(Effect.gen(function*() {
        const { intent, order } = yield* createStripeOrder(fake)
        yield* post(`/orders/${order.id}/confirm`)
        fake.fail({ path: "/v1/refunds", method: "POST", with: "drop-after-processing", times: 3 })
        expect((yield* refund(order.id, 900, "lost")).status).toBe(503)
        const before = Option.getOrThrow(yield* (yield* OrderStore).getOrder(order.id)).order
        expect(before.adjustments).toEqual([])
        expect((yield* refund(order.id, 900, "lost")).status).toBe(200)
        expect(stripeRefunds(intent.id)).toEqual([900])
      })))
  })
}
