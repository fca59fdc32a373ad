/**
 * The Stripe webhook on every store (memory, embedded PGlite, PostgreSQL when `TEST_DATABASE_URL` is
 * set): the event is kept in the transaction of its change, so of the same event delivered many times
 * at once exactly one applies (one refund recorded, one `order_update`), and an API refund and its
 * own `charge.refunded` arriving together record the refund once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import Stripe from "stripe"
import { requestReference } from "../../src/orders/order-service.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { until } from "../payments/stripe-fake-fixtures.ts"
import { post, request, testApp } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import { createStripeOrder, fakeClient, stripeConfig } from "../support/stripe-orders.ts"
import { FakeStripe } from "../support/stripe/fake-stripe.ts"
import type { StripeEvent } from "../support/stripe/objects.ts"

const SECRET = "whsec_test_stripe_stores"
const signer = new Stripe("sk_test_signer_only")

let fake: FakeStripe
beforeAll(async () => {
  fake = await FakeStripe.start()
})
afterAll(async () => {
  await fake.stop()
})

const deliver = (event: StripeEvent) =>
  Effect.gen(function*() {
    const payload = JSON.stringify(event)
    const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    return yield* request("POST", "/stripe/webhooks", {
      body: payload,
      auth: false,
      version: false,
      headers: { "stripe-signature": signer.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp }) }
    })
  })

const chargeRefunded = (intentId: string) =>
  fake.events("charge.refunded").filter((event) => (event.data.object as any).payment_intent === intentId).at(-1)!

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`Stripe webhooks: ${store.name}`, () => {
    store.register()
    const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(store.freshStores, (stores) =>
        Effect.provide(
          effect,
          testApp({ ...stores, config: stripeConfig(fake, SECRET) }) as Layer.Layer<
            any
          >
        )) as Effect.Effect<A, E, never>

    it.live("one event delivered eight times at once applies once", () =>
      run(Effect.gen(function*() {
        const { intent, order } = yield* createStripeOrder(fake)
        yield* post(`/orders/${order.id}/confirm`)
        yield* Effect.promise(() => fakeClient(fake).refunds.create({ payment_intent: intent.id, amount: 600 }))
        const event = chargeRefunded(intent.id)
        const answers = yield* Effect.all(Array.from({ length: 8 }, () => deliver(event)), { concurrency: "unbounded" })
        expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200))
        expect(answers.filter((a) => a.body.outcome === "applied").length).toBe(1)
        const orders = yield* OrderStore
        const stored = Option.getOrThrow(yield* orders.getOrder(order.id)).order
        expect(stored.refunds).toEqual([{ type: "original_payment", amount: 600 }])
        const events = yield* orders.listEvents({ orderId: order.id, limit: 10 })
        expect(events.map((e) => e.type)).toEqual(["order_update", "order_update", "order_create"])
      })))

    it.live("the event of an API refund applied while the request is still at Stripe: recorded once", () =>
      run(Effect.gen(function*() {
        const { intent, order } = yield* createStripeOrder(fake)
        yield* post(`/orders/${order.id}/confirm`)
        // Stripe refunds and the answer is lost: the SDK waits before it retries with the same key, and
        // meanwhile Stripe's event arrives and records the refund.
        fake.fail({ path: "/v1/refunds", method: "POST", with: "drop-after-processing" })
        const api = yield* Effect.fork(
          post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 450 }, {
            headers: { "idempotency-key": "refund-meets-its-event" }
          })
        )
        yield* Effect.promise(() =>
          until(() => fake.events("charge.refunded").some((e) => (e.data.object as any).payment_intent === intent.id))
        )
        const webhook = yield* deliver(chargeRefunded(intent.id))
        expect(webhook.body.outcome).toBe("applied")
        const answered = yield* Effect.flatten(api.await)
        expect(answered.status).toBe(200)
        expect(answered.body.refunds).toEqual([{ type: "original_payment", amount: 450 }])
        const orders = yield* OrderStore
        const stored = Option.getOrThrow(yield* orders.getOrder(order.id)).order
        expect(stored.refunds).toEqual([{ type: "original_payment", amount: 450 }])
        expect(stored.adjustments[0]?.request_reference).toBe(requestReference(order.id, "refund-meets-its-event"))
        expect(fake.refunds().filter((r) => r.payment_intent === intent.id).length).toBe(1)
        // The webhook's change queued the one order_update; the API's write found nothing to change.
        const events = yield* orders.listEvents({ orderId: order.id, limit: 10 })
        expect(events.map((e) => e.type)).toEqual(["order_update", "order_update", "order_create"])
      })))
  })
}
