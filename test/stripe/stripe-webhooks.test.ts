/**
 * `POST /stripe/webhooks`: events signed with the SDK's test header helper, as Stripe signs them. A
 * wrong signature, an old timestamp or a missing header is a 400 and changes nothing; each event acts
 * once (a replay is a 200 that changes nothing); refunds made in the dashboard, disputes and
 * PaymentIntent outcomes change the order or the session, each order change queuing its
 * `order_update`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, Option, Schema } from "effect"
import Stripe from "stripe"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { ORDER_EVENT_WIRES } from "../../src/orders/wire/acp/versions.ts"
import { PaymentDeclined } from "../../src/payments/model/payment.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { createReadySession, post, request, testApp } from "../support/http.ts"
import { createStripeOrder, fakeClient, stripeConfig } from "../support/stripe-orders.ts"
import { FakeStripe } from "../support/stripe/fake-stripe.ts"
import type { StripeEvent } from "../support/stripe/objects.ts"

const SECRET = "whsec_test_stripe_after_sale"
const signer = new Stripe("sk_test_signer_only")

let fake: FakeStripe
beforeAll(async () => {
  fake = await FakeStripe.start()
})
afterAll(async () => {
  await fake.stop()
})

const layer = (options: { secret?: string | undefined; payments?: Layer.Layer<PaymentProvider> } = {}) =>
  testApp({
    ...(options.payments === undefined ? {} : { payments: options.payments }),
    config: stripeConfig(fake, "secret" in options ? options.secret : SECRET)
  }) as Layer.Layer<any>

const run = <A, E>(effect: Effect.Effect<A, E, any>, app: Layer.Layer<any> = layer()) =>
  Effect.provide(effect, app) as Effect.Effect<A, E, never>

/** Posts `event` as Stripe does: its JSON, signed with `secret` at `timestamp` (unix seconds; default now). */
const deliver = (event: StripeEvent, options: { secret?: string; timestamp?: number; header?: string | null } = {}) =>
  Effect.gen(function*() {
    const payload = JSON.stringify(event, null, 2)
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const header = options.header !== undefined
      ? options.header
      : signer.webhooks.generateTestHeaderString({
        payload,
        secret: options.secret ?? SECRET,
        timestamp: options.timestamp ?? now
      })
    return yield* request("POST", "/stripe/webhooks", {
      body: payload,
      auth: false,
      version: false,
      contentType: "application/json; charset=utf-8",
      headers: header === null ? {} : { "stripe-signature": header }
    })
  })

/** The latest event of `type` about `objectOf` (a PaymentIntent's charge, refund or dispute). */
const latestEvent = (type: string, about: (object: any) => boolean): StripeEvent => {
  const found = fake.events(type).filter((event) => about(event.data.object))
  if (found.length === 0) throw new Error(`no ${type} event`)
  return found.at(-1)!
}

const storedOrder = (id: string) =>
  Effect.map(Effect.flatMap(OrderStore, (store) => store.getOrder(id)), (found) => Option.getOrThrow(found).order)

const outbox = (orderId: string) =>
  Effect.map(
    Effect.flatMap(OrderStore, (store) => store.listEvents({ orderId, limit: 100 })),
    (events) => [...events].reverse()
  )

const dashboardRefund = (paymentIntent: string, amount: number) =>
  Effect.promise(() => fakeClient(fake).refunds.create({ payment_intent: paymentIntent, amount }))

describe("POST /stripe/webhooks", () => {
  it.live("without STRIPE_WEBHOOK_SECRET the route does not exist", () =>
    run(
      Effect.gen(function*() {
        const { intent } = yield* createStripeOrder(fake)
        yield* dashboardRefund(intent.id, 100)
        const response = yield* deliver(latestEvent("charge.refunded", (c) => c.payment_intent === intent.id))
        expect(response.status).toBe(404)
      }),
      layer({ secret: undefined })
    ))

  it.live("a wrong signature, an old timestamp or no header: 400 and nothing changes; then the event applies once", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      yield* dashboardRefund(intent.id, 300)
      const event = latestEvent("charge.refunded", (c) => c.payment_intent === intent.id)
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const wrong = yield* deliver(event, { secret: "whsec_someone_else" })
      expect(wrong.status).toBe(400)
      expect(wrong.body).toMatchObject({ type: "invalid_request", code: "invalid_signature" })
      expect(wrong.text).not.toContain(SECRET)
      const old = yield* deliver(event, { timestamp: now - 301 })
      expect(old.status).toBe(400)
      expect(old.body.message).toContain("tolerance")
      expect((yield* deliver(event, { header: null })).status).toBe(400)
      expect((yield* deliver(event, { header: "t=1,v1=00" })).status).toBe(400)
      expect((yield* storedOrder(order.id)).adjustments).toEqual([])
      const before = (yield* outbox(order.id)).length
      // Within the tolerance is accepted.
      const recent = yield* deliver(event, { timestamp: now - 200 })
      expect(recent.status).toBe(200)
      expect(recent.body).toEqual({ received: true, outcome: "applied" })
      const asked = fake.requests({ method: "GET" }).length
      const replay = yield* deliver(event)
      expect(replay.status).toBe(200)
      expect(replay.body).toEqual({ received: true, outcome: "replayed" })
      // A redelivery asks Stripe nothing.
      expect(fake.requests({ method: "GET" }).length).toBe(asked)
      const updated = yield* storedOrder(order.id)
      expect(updated.refunds).toEqual([{ type: "original_payment", amount: 300 }])
      expect((yield* outbox(order.id)).length).toBe(before + 1)
    })))

  it.live("a refund made in the Stripe dashboard becomes a refund adjustment; ours is recorded once", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      const ours = yield* post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 1000 })
      expect(ours.status).toBe(200)
      const oursEvent = latestEvent("charge.refunded", (c) => c.payment_intent === intent.id)
      const afterOurs = (yield* outbox(order.id)).length
      // Our refund's own event: already recorded, nothing changes, no order_update.
      expect((yield* deliver(oursEvent)).body.outcome).toBe("applied")
      expect((yield* storedOrder(order.id)).adjustments.length).toBe(1)
      expect((yield* outbox(order.id)).length).toBe(afterOurs)
      const dashboard = yield* dashboardRefund(intent.id, 250)
      yield* deliver(latestEvent("charge.refunded", (c) => c.payment_intent === intent.id))
      const updated = yield* storedOrder(order.id)
      expect(updated.refunds).toEqual([
        { type: "original_payment", amount: 1000 },
        { type: "original_payment", amount: 250 }
      ])
      expect(updated.adjustments[1]).toMatchObject({
        id: "adj_2",
        type: "refund",
        status: "completed",
        amount: 250,
        payment_reference: dashboard.id
      })
      expect(updated.totals.find((t) => t.type === "amount_refunded")?.amount).toBe(1250)
      const events = yield* outbox(order.id)
      expect(events.length).toBe(afterOurs + 1)
      expect(events.at(-1)).toMatchObject({ type: "order_update" })
      // An old event delivered late (Stripe's order is not guaranteed) changes nothing.
      expect((yield* deliver(oursEvent)).body.outcome).toBe("replayed")
    })))

  it.live("a refund whose answers were lost: the event records it, and the client's retry refunds nothing more", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      fake.fail({ path: "/v1/refunds", method: "POST", with: "drop-after-processing", times: 3 })
      const lost = yield* post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 800 }, {
        headers: { "idempotency-key": "lost-then-webhook" }
      })
      expect(lost.status).toBe(503)
      yield* deliver(latestEvent("charge.refunded", (c) => c.payment_intent === intent.id))
      expect((yield* storedOrder(order.id)).refunds).toEqual([{ type: "original_payment", amount: 800 }])
      const retried = yield* post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 800 }, {
        headers: { "idempotency-key": "lost-then-webhook" }
      })
      expect(retried.status).toBe(200)
      expect(retried.body.refunds).toEqual([{ type: "original_payment", amount: 800 }])
      expect(fake.refunds().filter((r) => r.payment_intent === intent.id).map((r) => r.amount)).toEqual([800])
    })))

  it.live("a dispute: pending when opened, completed when lost; each ACP version's event stays valid", () =>
    run(Effect.gen(function*() {
      const { intent, order, total } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      const dispute = fake.openDispute(intent.id, "fraudulent")
      const created = latestEvent("charge.dispute.created", (d) => d.id === dispute.id)
      expect((yield* deliver(created)).status).toBe(200)
      const opened = yield* storedOrder(order.id)
      expect(opened.adjustments).toEqual([
        expect.objectContaining({
          id: "adj_1",
          type: "dispute",
          status: "pending",
          amount: total,
          reason: "fraudulent",
          payment_reference: dispute.id
        })
      ])
      fake.closeDispute(dispute.id, "lost")
      yield* deliver(latestEvent("charge.dispute.closed", (d) => d.id === dispute.id))
      // A late redelivery of the opening neither reopens it nor adds one.
      yield* deliver(created)
      const closed = yield* storedOrder(order.id)
      expect(closed.adjustments.map((a) => [a.id, a.type, a.status])).toEqual([["adj_1", "dispute", "completed"]])
      expect(closed.refunds).toEqual([])
      const events = yield* outbox(order.id)
      const last = events.at(-1)!.payload
      for (const [version, wire] of Object.entries(ORDER_EVENT_WIRES)) {
        const body = JSON.parse(wire.body(last))
        const decoded = Schema.decodeUnknownEither(wire.sent, { onExcessProperty: "error" })(body)
        expect(Either.isRight(decoded), `${version}: ${Either.isLeft(decoded) ? decoded.left.message : ""}`).toBe(true)
        if (version === "2026-04-17") {
          expect(body.data.adjustments).toEqual([
            expect.objectContaining({ type: "dispute", status: "completed", amount: total, reason: "fraudulent" })
          ])
        }
        if (version === "2025-09-29") expect(body.data.adjustments).toEqual([])
      }
    })))

  it.live("a dispute won is failed: nothing went back to the buyer", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      const dispute = fake.openDispute(intent.id)
      fake.closeDispute(dispute.id, "won")
      // Closed delivered before created (Stripe does not promise the order).
      yield* deliver(latestEvent("charge.dispute.closed", (d) => d.id === dispute.id))
      yield* deliver(latestEvent("charge.dispute.created", (d) => d.id === dispute.id))
      const stored = yield* storedOrder(order.id)
      expect(stored.adjustments.map((a) => [a.type, a.status])).toEqual([["dispute", "failed"]])
    })))

  it.live("rate limited before the signature is checked: 429 with Retry-After, nothing kept", () =>
    run(
      Effect.gen(function*() {
        const { intent } = yield* createStripeOrder(fake)
        yield* dashboardRefund(intent.id, 100)
        const event = latestEvent("refund.created", (r) => r.payment_intent === intent.id)
        expect((yield* deliver(event, { secret: "whsec_wrong" })).status).toBe(400)
        expect((yield* deliver(event, { secret: "whsec_wrong" })).status).toBe(400)
        const limited = yield* deliver(event)
        expect(limited.status).toBe(429)
        expect(limited.body).toMatchObject({ code: "too_many_requests" })
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
      }),
      testApp({
        config: { ...stripeConfig(fake, SECRET), webhookReceiverRateLimitPerMinute: 2 }
      }) as Layer.Layer<any>
    ))

  it.live("other event types are kept once and change nothing", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* dashboardRefund(intent.id, 100)
      const other = latestEvent("refund.created", (r) => r.payment_intent === intent.id)
      expect((yield* deliver(other)).body).toEqual({ received: true, outcome: "applied" })
      expect((yield* deliver(other)).body).toEqual({ received: true, outcome: "replayed" })
      expect((yield* storedOrder(order.id)).adjustments).toEqual([])
    })))

  it.live("Stripe unreachable while handling: 503 and nothing kept, so Stripe's next delivery applies it", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* dashboardRefund(intent.id, 400)
      const event = latestEvent("charge.refunded", (c) => c.payment_intent === intent.id)
      fake.fail({ path: /^\/v1\/payment_intents\//, method: "GET", with: "500", times: 3 })
      const failed = yield* deliver(event)
      expect(failed.status).toBe(503)
      expect((yield* storedOrder(order.id)).refunds).toEqual([])
      expect((yield* deliver(event)).body.outcome).toBe("applied")
      expect((yield* storedOrder(order.id)).refunds).toEqual([{ type: "original_payment", amount: 400 }])
    })))
})

describe("POST /stripe/webhooks: PaymentIntent outcomes", () => {
  /** A provider that says every key's payment ended as `outcome` (a charge as the PaymentIntent, or a decline). */
  const settledAs = (outcome: Either.Either<{ readonly id: string }, PaymentDeclined>) =>
    Layer.succeed(PaymentProvider, {
      settleCharge: (attempt: { readonly amount: number; readonly currency: string }) =>
        Effect.succeed(
          Option.some(Either.map(outcome, ({ id }) => ({ id, amount: attempt.amount, currency: attempt.currency })))
        )
    } as never)

  const intentFor = () =>
    Effect.promise(() =>
      fakeClient(fake).paymentIntents.create({
        amount: 1000,
        currency: "usd",
        payment_method_data: { type: "card", shared_payment_granted_token: fake.grantToken().id } as never,
        metadata: { checkout_session_id: "pending" }
      })
    )

  /** A session whose payment step 1 committed and whose request then died: its attempt pending. */
  const pendingSession = Effect.gen(function*() {
    const session = yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])
    const store = yield* CheckoutStore
    const { session: stored } = Option.getOrThrow(yield* store.readSessionForPayment(session.id))
    const now = yield* Clock.currentTimeMillis
    yield* store.startPaymentAttempt(stored, {
      sessionId: session.id,
      sequence: 1,
      idempotencyKey: `${session.id}:1`,
      amount: stored.totals.find((t) => t.type === "total")!.amount,
      currency: stored.currency,
      credentialRef: "spt_test",
      state: "pending",
      chargeId: undefined,
      createdAt: now,
      updatedAt: now
    })
    return session.id
  })

  /** The PaymentIntent's event of `type`, as Stripe would send it for the session. */
  const outcomeEvent = (intentId: string, sessionId: string, type: string): StripeEvent => {
    const event: StripeEvent = structuredClone({
      ...latestEvent("payment_intent.created", (pi) => pi.id === intentId),
      id: `evt_${type.replace(".", "_")}_${sessionId}`,
      type
    })
    ;(event.data.object as any).metadata = { checkout_session_id: sessionId }
    return event
  }

  it.live("payment_intent.succeeded settles the session's pending payment now: completed with its order", () =>
    Effect.gen(function*() {
      const intent = yield* intentFor()
      yield* run(
        Effect.gen(function*() {
          const sessionId = yield* pendingSession
          const event = outcomeEvent(intent.id, sessionId, "payment_intent.succeeded")
          expect((yield* deliver(event)).body.outcome).toBe("applied")
          const after = Option.getOrThrow(yield* (yield* CheckoutStore).readSessionForPayment(sessionId))
          expect(after.session.status).toBe("completed")
          expect(Option.getOrThrow(after.latestAttempt)).toMatchObject({ state: "succeeded", chargeId: intent.id })
          const orders = yield* (yield* OrderStore).listOrders({ search: sessionId, limit: 5 })
          expect(orders.length).toBe(1)
          expect((yield* deliver(event)).body.outcome).toBe("replayed")
        }),
        layer({ payments: settledAs(Either.right({ id: intent.id })) })
      )
    }))

  it.live("payment_intent.payment_failed: the attempt declined, the session payable again; none pending: nothing", () =>
    Effect.gen(function*() {
      const intent = yield* intentFor()
      yield* run(
        Effect.gen(function*() {
          const sessionId = yield* pendingSession
          const event = outcomeEvent(intent.id, sessionId, "payment_intent.payment_failed")
          expect((yield* deliver(event)).body.outcome).toBe("applied")
          const after = Option.getOrThrow(yield* (yield* CheckoutStore).readSessionForPayment(sessionId))
          expect(after.session.status).toBe("ready_for_payment")
          expect(Option.getOrThrow(after.latestAttempt).state).toBe("declined")
          // A session with nothing pending: acknowledged, unchanged.
          const idle = (yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])).id
          const before = yield* (yield* CheckoutStore).readSessionForPayment(idle)
          expect((yield* deliver(outcomeEvent(intent.id, idle, "payment_intent.payment_failed"))).status).toBe(200)
          expect(yield* (yield* CheckoutStore).readSessionForPayment(idle)).toEqual(before)
        }),
        layer({
          payments: settledAs(Either.left(new PaymentDeclined({ reason: "card_declined", message: "declined" })))
        })
      )
    }))
})
