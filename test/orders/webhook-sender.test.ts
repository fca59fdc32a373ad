/** The order-event sender: signed deliveries to the receiver, retries and dead letters, ordering per order. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted, TestClock } from "effect"
import { makeWebhookSender } from "../../src/orders/http/webhook-sender.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { WebhookTransport } from "../../src/orders/webhook-transport.ts"
import { type AppConfigShape } from "../../src/platform/config.ts"
import { verifySignature } from "../../src/shared/hmac-signature.ts"
import { get, post, testApp } from "../support/http.ts"
import { type Answer, createOrder, scriptedTransport, UnusedPaymentProvider } from "../support/webhooks.ts"

const NOW = 1_767_225_600_000 // 2026-01-01T00:00:00Z

const app = (config: Partial<AppConfigShape> = {}) =>
  testApp({ payments: UnusedPaymentProvider, config: { port: 8080, ...config } })
const run = <A, E>(effect: Effect.Effect<A, E, any>, layer: Layer.Layer<any, any, any> = app()) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), layer as Layer.Layer<any>) as Effect.Effect<
    A,
    E,
    never
  >

/** A sender posting through a scripted fake endpoint. */
const senderWith = (script: ReadonlyArray<Answer>, fallback?: Answer) =>
  Effect.gen(function*() {
    const { sent, transport } = yield* scriptedTransport(script, fallback)
    const sender = yield* makeWebhookSender().pipe(Effect.provideService(WebhookTransport, transport))
    return { sender, sent }
  })

const eventOf = (id: string) =>
  Effect.flatMap(OrderStore, (store) => store.getEvent(id)).pipe(Effect.map(Option.getOrThrow))

const eventsOf = (orderId: string) =>
  Effect.flatMap(OrderStore, (store) => store.listEvents({ orderId, limit: 100 })).pipe(
    Effect.map((list) => [...list].reverse())
  )

describe("webhook sender → receiver (this process's own receiver)", () => {
  it.effect("delivers signed events the receiver verifies; the receiver keeps the latest state", () =>
    run(Effect.gen(function*() {
      const { sender, sent } = yield* senderWith([], "loopback")
      const order = yield* createOrder()
      const [create] = yield* eventsOf(order.id)
      const reports = yield* sender.deliverDue
      expect(reports).toEqual([{ eventId: create!.id, attempt: 1, outcome: "delivered", status: 200 }])

      const [request] = yield* sent
      expect(request!.url).toBe("http://127.0.0.1:8080/agentic_checkout/webhooks/order_events")
      expect(request!.headers["content-type"]).toBe("application/json")
      expect(request!.headers["request-id"]).toBe(create!.id)
      const body = JSON.parse(request!.body)
      expect(body).toEqual({ type: "order_create", data: order })
      expect(request!.headers["merchant-signature"]).toMatch(new RegExp(`^t=${NOW / 1000},v1=[0-9a-f]{64}$`))
      const verified = verifySignature({
        header: request!.headers["merchant-signature"],
        rawBody: request!.body,
        secrets: ["whsec_test"],
        nowSeconds: NOW / 1000,
        toleranceSeconds: 300
      })
      expect(Either.isRight(verified)).toBe(true)
      expect(Either.isLeft(verifySignature({
        header: request!.headers["merchant-signature"],
        rawBody: request!.body,
        secrets: ["whsec_other"],
        nowSeconds: NOW / 1000,
        toleranceSeconds: 300
      }))).toBe(true)

      yield* post(`/orders/${order.id}/confirm`)
      expect((yield* sender.deliverDue).map((r) => r.outcome)).toEqual(["delivered"])
      const received = yield* get(`/agentic_checkout/orders/${order.id}`)
      expect(received.status).toBe(200)
      expect(received.body.status).toBe("confirmed")
      expect(received.body.order).toEqual((yield* get(`/orders/${order.id}`)).body)
      expect(received.body.events.map((e: { type: string }) => e.type)).toEqual(["order_create", "order_update"])
      expect((yield* get("/webhooks/metrics")).body).toEqual({ pending: 0, delivered: 2, dead: 0 })
    })))

  it.effect("a receiver with another secret answers 401: dead-lettered at once", () =>
    run(
      Effect.gen(function*() {
        const { sender } = yield* senderWith([], "loopback")
        yield* createOrder()
        expect(yield* sender.deliverDue).toMatchObject([{ outcome: "dead", status: 401 }])
      }),
      app({ webhookSecret: Redacted.make("whsec_wrong") })
    ))
})

describe("webhook sender: retries", () => {
  it.effect("500, 429 with Retry-After, network error, then 200: backoff on the Clock, same Request-Id and body", () =>
    run(Effect.gen(function*() {
      const { sender, sent } = yield* senderWith([
        { status: 500 },
        { status: 429, headers: { "retry-after": "120" } },
        "network_error",
        { status: 200 }
      ])
      const order = yield* createOrder()
      const [event] = yield* eventsOf(order.id)
      const id = event!.id

      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "retry", status: 500, attempt: 1 }])
      const afterFirst = yield* eventOf(id)
      expect(afterFirst).toMatchObject({
        state: "pending",
        attempts: 1,
        lastStatus: 500,
        lastError: "HTTP 500",
        firstAttemptAt: NOW
      })
      expect(afterFirst.nextAttemptAt - NOW).toBeGreaterThanOrEqual(0)
      expect(afterFirst.nextAttemptAt - NOW).toBeLessThan(1000) // full jitter below 1 s × 2^0

      yield* TestClock.setTime(afterFirst.nextAttemptAt)
      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "retry", status: 429, attempt: 2 }])
      const afterSecond = yield* eventOf(id)
      expect(afterSecond.nextAttemptAt).toBe(afterFirst.nextAttemptAt + 120_000) // Retry-After honoured

      yield* TestClock.adjust("119 seconds")
      expect(yield* sender.deliverDue).toEqual([]) // not due yet
      yield* TestClock.adjust("1 second")
      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "retry", status: null, attempt: 3 }])
      const afterThird = yield* eventOf(id)
      expect(afterThird.lastError).toBe("ECONNREFUSED")
      expect(afterThird.nextAttemptAt - afterSecond.nextAttemptAt).toBeLessThan(4000) // 1 s × 2^2

      yield* TestClock.setTime(afterThird.nextAttemptAt)
      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "delivered", status: 200, attempt: 4 }])
      expect(yield* eventOf(id)).toMatchObject({
        state: "delivered",
        attempts: 4,
        deliveredAt: afterThird.nextAttemptAt
      })

      const requests = yield* sent
      expect(requests).toHaveLength(4)
      expect(new Set(requests.map((r) => r.headers["request-id"]))).toEqual(new Set([id]))
      expect(new Set(requests.map((r) => r.body)).size).toBe(1)
      expect(requests.map((r) => r.headers["merchant-signature"]!.split(",")[0])).toEqual(
        requests.map((r) => `t=${Math.floor(r.at / 1000)}`)
      )
    })))

  it.effect("400 is dead-lettered at once; listed as dead; redrive makes it pending and it is delivered", () =>
    run(Effect.gen(function*() {
      const { sender } = yield* senderWith([{ status: 400 }], { status: 204 })
      const order = yield* createOrder()
      const [event] = yield* eventsOf(order.id)
      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "dead", status: 400 }])
      expect((yield* get("/webhooks/metrics")).body).toEqual({ pending: 0, delivered: 0, dead: 1 })

      const dead = yield* get("/webhooks/deliveries?state=dead")
      expect(dead.status).toBe(200)
      expect(dead.body.data).toEqual([
        {
          id: event!.id,
          order_id: order.id,
          sequence: 1,
          type: "order_create",
          state: "dead",
          attempts: 1,
          next_attempt_at: new Date(NOW).toISOString(),
          first_attempt_at: new Date(NOW).toISOString(),
          last_status: 400,
          last_error: "HTTP 400",
          created_at: new Date(NOW).toISOString(),
          delivered_at: null
        }
      ])
      expect((yield* get("/webhooks/deliveries?state=delivered")).body.data).toEqual([])
      expect((yield* get("/webhooks/deliveries?state=lost")).status).toBe(400)

      yield* TestClock.adjust("1 hour")
      const redriven = yield* post(`/webhooks/deliveries/${event!.id}/redrive`)
      expect(redriven.status).toBe(200)
      expect(redriven.body).toMatchObject({ state: "pending", attempts: 0, first_attempt_at: null, last_status: 400 })
      expect((yield* post(`/webhooks/deliveries/${event!.id}/redrive`)).body.code).toBe("delivery_not_dead")
      expect((yield* post("/webhooks/deliveries/evt_nope/redrive")).status).toBe(404)

      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "delivered", status: 204 }])
      expect((yield* get("/webhooks/metrics")).body).toEqual({ pending: 0, delivered: 1, dead: 0 })
    })))

  it.effect("retries stop at the horizon: then dead-lettered", () =>
    run(
      Effect.gen(function*() {
        const { sender, sent } = yield* senderWith([], { status: 503 })
        const order = yield* createOrder()
        const [event] = yield* eventsOf(order.id)
        let outcome = "retry"
        for (let i = 0; i < 50 && outcome === "retry"; i++) {
          const reports = yield* sender.deliverDue
          outcome = reports[0]?.outcome ?? "none"
          const current = yield* eventOf(event!.id)
          if (current.state === "pending") yield* TestClock.setTime(current.nextAttemptAt)
        }
        expect(outcome).toBe("dead")
        const final = yield* eventOf(event!.id)
        expect(final.state).toBe("dead")
        expect(final.attempts).toBeGreaterThanOrEqual(3)
        // Every attempt was made within the horizon (60 s) of the first.
        const times = (yield* sent).map((r) => r.at)
        expect(times[times.length - 1]! - times[0]!).toBeLessThanOrEqual(60_000)
        expect(times).toHaveLength(final.attempts)
      }),
      app({ webhookRetryHorizonSeconds: 60 })
    ))
})

describe("webhook sender: ordering", () => {
  it.effect("an order's update is not delivered before its create, even while the create is retried", () =>
    run(Effect.gen(function*() {
      const { sender, sent } = yield* senderWith([{ status: 500 }])
      const order = yield* createOrder()
      yield* post(`/orders/${order.id}/confirm`)
      yield* post(`/orders/${order.id}/cancel`)

      expect(yield* sender.deliverDue).toMatchObject([{ outcome: "retry", status: 500 }])
      expect(yield* sender.deliverDue).toEqual([]) // the create is not due; the updates wait behind it
      const other = yield* createOrder() // another order is not held up
      const [otherCreate] = yield* eventsOf(other.id)
      expect(yield* sender.deliverDue).toMatchObject([{ eventId: otherCreate!.id, outcome: "delivered" }])
      for (let i = 0; i < 10; i++) {
        const pending = (yield* eventsOf(order.id)).filter((e) => e.state === "pending")
        if (pending.length === 0) break
        yield* TestClock.setTime(Math.max(...pending.map((e) => e.nextAttemptAt)))
        yield* sender.deliverDue
      }
      const delivered = (yield* sent).map((r) =>
        JSON.parse(r.body) as { type: string; data: { id: string; status: string } }
      )
      expect(delivered.filter((e) => e.data.id === order.id).map((e) => `${e.type}:${e.data.status}`)).toEqual([
        "order_create:created", // 500
        "order_create:created",
        "order_update:confirmed",
        "order_update:canceled"
      ])
      expect(delivered.filter((e) => e.data.id === other.id).map((e) => e.type)).toEqual(["order_create"])
      expect((yield* get("/webhooks/metrics")).body).toEqual({ pending: 0, delivered: 4, dead: 0 })
    })))
})
