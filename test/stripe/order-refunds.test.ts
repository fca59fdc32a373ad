/**
 * An order's refund to the original payment is a Stripe Refund, made exactly once: keyed by the
 * order and the request (its Idempotency-Key), so that the SDK's retries and a retried request never
 * refund twice, and concurrent refunds of one order are each recorded once; Stripe down is a 503
 * with nothing written, Stripe refusing a clear 4xx.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { requestReference } from "../../src/orders/order-service.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { until } from "../payments/stripe-fake-fixtures.ts"
import { post, testApp } from "../support/http.ts"
import { createStripeOrder, fakeClient, stripeConfig } from "../support/stripe-orders.ts"
import { FakeStripe } from "../support/stripe/fake-stripe.ts"
import { createOrder } from "../support/webhooks.ts"

let fake: FakeStripe
beforeAll(async () => {
  fake = await FakeStripe.start()
})
afterAll(async () => {
  await fake.stop()
})

const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    effect,
    testApp({ config: stripeConfig(fake) }) as Layer.Layer<any>
  ) as Effect.Effect<A, E, never>

const refund = (orderId: string, body: { type: string; amount: number }, key?: string) =>
  post(`/orders/${orderId}/refunds`, body, key === undefined ? {} : { headers: { "idempotency-key": key } })

const refundsOf = (intentId: string) => fake.refunds().filter((r) => r.payment_intent === intentId)
const refundPosts = (orderId: string) =>
  fake.requests({ method: "POST", path: "/v1/refunds" }).filter((r) => r.idempotencyKey?.includes(orderId))
const confirmed = (orderId: string) => post(`/orders/${orderId}/confirm`)

describe("order refunds through Stripe", () => {
  it.live("a refund to the original payment is a Stripe Refund keyed by the order and the request", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      const response = yield* refund(order.id, { type: "original_payment", amount: 1000 }, "refund-key-1")
      expect(response.status).toBe(200)
      const [made] = refundsOf(intent.id)
      expect(made).toMatchObject({
        amount: 1000,
        metadata: { order_id: order.id, adjustment_id: "adj_1" }
      })
      expect(response.body.refunds).toEqual([{ type: "original_payment", amount: 1000 }])
      expect(response.body.adjustments).toEqual([
        expect.objectContaining({
          id: "adj_1",
          type: "refund",
          status: "completed",
          amount: 1000,
          payment_reference: made!.id
        })
      ])
      expect(refundPosts(order.id).map((r) => r.idempotencyKey)).toEqual([
        `order-refund:${order.id}:${requestReference(order.id, "refund-key-1")}`
      ])
      expect(made!.metadata.request_reference).toBe(requestReference(order.id, "refund-key-1"))
      // The same request again is answered as it was; Stripe is not asked again.
      const again = yield* refund(order.id, { type: "original_payment", amount: 1000 }, "refund-key-1")
      expect(again.body).toEqual(response.body)
      // A second refund is a second adjustment, a second Stripe refund.
      const second = yield* refund(order.id, { type: "original_payment", amount: 500 }, "refund-key-2")
      expect(second.body.adjustments.map((a: any) => a.id)).toEqual(["adj_1", "adj_2"])
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([1000, 500])
      expect(second.body.totals.find((t: any) => t.type === "amount_refunded").amount).toBe(1500)
    })))

  it.live("store credit and orders paid with the built-in processor move nothing at Stripe", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      const credit = yield* refund(order.id, { type: "store_credit", amount: 700 })
      expect(credit.status).toBe(200)
      expect(credit.body.adjustments[0]).toMatchObject({ type: "credit", amount: 700 })
      expect(credit.body.adjustments[0].payment_reference).toBeUndefined()
      expect(refundsOf(intent.id)).toEqual([])
      const builtIn = yield* createOrder()
      yield* confirmed(builtIn.id)
      const local = yield* refund(builtIn.id, { type: "original_payment", amount: 100 })
      expect(local.status).toBe(200)
      expect(local.body.adjustments[0].payment_reference).toBeUndefined()
      expect(refundPosts(builtIn.id)).toEqual([])
    })))

  it.live("a connection dropped after Stripe refunded: the SDK's retry with the same key gets the same refund", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      fake.fail({ path: "/v1/refunds", method: "POST", with: "drop-after-processing" })
      const response = yield* refund(order.id, { type: "original_payment", amount: 1200 }, "drop-1")
      expect(response.status).toBe(200)
      expect(refundPosts(order.id).length).toBe(2)
      expect(new Set(refundPosts(order.id).map((r) => r.idempotencyKey)).size).toBe(1)
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([1200])
      expect(response.body.refunds).toEqual([{ type: "original_payment", amount: 1200 }])
    })))

  it.live("Stripe unreachable after every retry: 503 with Retry-After and nothing written; the retry refunds once", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      // Every try of the SDK made the refund and lost the answer: money moved, the order does not know.
      fake.fail({ path: "/v1/refunds", method: "POST", with: "drop-after-processing", times: 3 })
      const failed = yield* refund(order.id, { type: "original_payment", amount: 900 }, "lost-1")
      expect(failed.status).toBe(503)
      expect(failed.body).toMatchObject({ type: "service_unavailable", code: "service_unavailable" })
      expect(Number(failed.headers.get("retry-after"))).toBeGreaterThan(0)
      const store = yield* OrderStore
      const unchanged = yield* store.getOrder(order.id)
      expect(unchanged._tag === "Some" && unchanged.value.order.adjustments).toEqual([])
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([900])
      // The client retries with its key: the same Stripe key replays the refund Stripe made.
      const retried = yield* refund(order.id, { type: "original_payment", amount: 900 }, "lost-1")
      expect(retried.status).toBe(200)
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([900])
      expect(retried.body.refunds).toEqual([{ type: "original_payment", amount: 900 }])
    })))

  it.live("Stripe answering 500 or 429 on every try: 503, nothing refunded, nothing written", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      fake.fail({ path: "/v1/refunds", method: "POST", with: "429", times: 3 })
      const limited = yield* refund(order.id, { type: "original_payment", amount: 900 })
      expect(limited.status).toBe(503)
      expect(limited.headers.get("retry-after")).not.toBeNull()
      fake.fail({ path: "/v1/refunds", method: "POST", with: "500", times: 3 })
      expect((yield* refund(order.id, { type: "original_payment", amount: 900 })).status).toBe(503)
      expect(refundsOf(intent.id)).toEqual([])
      const ok = yield* refund(order.id, { type: "original_payment", amount: 900 })
      expect(ok.status).toBe(200)
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([900])
    })))

  it.live("Stripe refusing: more than the charge has left is 422 at $.amount; a disputed payment is 409", () =>
    run(Effect.gen(function*() {
      const { intent, order, total } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      // Refunded in the Stripe dashboard: the order does not know it yet.
      yield* Effect.promise(() => fakeClient(fake).refunds.create({ payment_intent: intent.id, amount: total - 100 }))
      const over = yield* refund(order.id, { type: "original_payment", amount: 500 })
      expect(over.status).toBe(422)
      expect(over.body).toMatchObject({ code: "refund_exceeds_total", param: "$.amount" })
      const other = yield* createStripeOrder(fake)
      yield* confirmed(other.order.id)
      fake.openDispute(other.intent.id)
      const disputed = yield* refund(other.order.id, { type: "original_payment", amount: 500 })
      expect(disputed.status).toBe(409)
      expect(disputed.body).toMatchObject({ code: "payment_disputed" })
      const stored = yield* (yield* OrderStore).getOrder(other.order.id)
      expect(stored._tag === "Some" && stored.value.order.refunds).toEqual([])
    })))

  it.live("two refunds of one order at once: each its own Stripe refund and adjustment, counted once each", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      // The first waits at Stripe while the second reads the same order and asks too.
      fake.fail({ path: "/v1/refunds", method: "POST", with: "delay", ms: 300 })
      const first = yield* Effect.fork(refund(order.id, { type: "original_payment", amount: 1000 }, "race-a"))
      yield* Effect.promise(() => until(() => refundPosts(order.id).length > 0))
      const second = yield* refund(order.id, { type: "original_payment", amount: 2000 }, "race-b")
      const winner = yield* first.await.pipe(Effect.flatten)
      expect([winner.status, second.status]).toEqual([200, 200])
      expect(refundsOf(intent.id).map((r) => r.amount).sort()).toEqual([1000, 2000])
      const stored = yield* (yield* OrderStore).getOrder(order.id)
      const final = stored._tag === "Some" ? stored.value.order : undefined
      expect(final?.adjustments.map((a) => a.id)).toEqual(["adj_1", "adj_2"])
      expect(new Set(final?.adjustments.map((a) => a.payment_reference))).toEqual(
        new Set(refundsOf(intent.id).map((r) => r.id))
      )
      expect(final?.totals.find((t) => t.type === "amount_refunded")?.amount).toBe(3000)
      // Retried, neither refunds again.
      expect((yield* refund(order.id, { type: "original_payment", amount: 1000 }, "race-a")).status).toBe(200)
      expect((yield* refund(order.id, { type: "original_payment", amount: 2000 }, "race-b")).status).toBe(200)
      expect(refundsOf(intent.id).length).toBe(2)
    })))

  it.live("two refunds at once that together exceed the payment: Stripe refuses one, which records nothing", () =>
    run(Effect.gen(function*() {
      const { intent, order, total } = yield* createStripeOrder(fake)
      yield* confirmed(order.id)
      const part = Math.floor(total * 0.6)
      fake.fail({ path: "/v1/refunds", method: "POST", with: "delay", ms: 300 })
      const first = yield* Effect.fork(refund(order.id, { type: "original_payment", amount: part }, "big-a"))
      yield* Effect.promise(() => until(() => refundPosts(order.id).length > 0))
      const second = yield* refund(order.id, { type: "original_payment", amount: part }, "big-b")
      const winner = yield* first.await.pipe(Effect.flatten)
      expect([winner.status, second.status].sort()).toEqual([200, 422])
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([part])
      const stored = yield* (yield* OrderStore).getOrder(order.id)
      expect(stored._tag === "Some" && stored.value.order.refunds).toEqual([{ type: "original_payment", amount: part }])
    })))
})
