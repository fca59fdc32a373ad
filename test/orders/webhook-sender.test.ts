import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Either, Layer, Logger, Option, Redacted, Ref, TestClock } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { OutboxSignal, OutboxSignalLive } from "../../src/orders/outbox-signal.ts"
import {
  type DeliveryReport,
  makeWebhookSender,
  WebhookSender,
  webhookSenderLayer,
  webhookSenderWorker
} from "../../src/orders/webhook-sender.ts"
import { AppConfig, type AppConfigShape, testConfig } from "../../src/platform/config.ts"
import { verifySignature } from "../../src/shared/hmac-signature.ts"
import { WebhookTransport } from "../../src/webhooks/webhook-transport.ts"
import { createReadySession, get, paymentData, post, testApp } from "../support/http.ts"
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

describe("webhook sender worker on the application", () => {
  /** The application with the real worker (one lane) posting to a recording endpoint answering 200. */
  const appWithWorker = Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<{ readonly at: number; readonly body: string }>>([])
    const transport = WebhookTransport.of({
      post: ({ body }) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (at) => Effect.as(Ref.update(sent, (list) => [...list, { at, body }]), { status: 200, retryAfter: undefined })
        )
    })
    const layer = webhookSenderWorker("1 second", 1).pipe(
      Layer.provide(webhookSenderLayer()),
      Layer.provide(Layer.succeed(WebhookTransport, transport)),
      Layer.provideMerge(testApp({ config: { port: 8080 } }))
    )
    return { layer, sent }
  })

  it.effect("an order event goes out right after the completion and the order change that queued it (within the gathering time)", () =>
    Effect.gen(function*() {
      const { layer, sent } = yield* appWithWorker
      yield* Effect.scoped(Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        yield* Layer.build(layer).pipe(Effect.flatMap((context) =>
          Effect.gen(function*() {
            yield* TestClock.adjust(0) // the lane's first round: nothing to send yet
            const session = yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])
            const completed = yield* post(`/checkout_sessions/${session.id}/complete`, { payment_data: paymentData })
            expect(completed.status).toBe(200)
            yield* TestClock.adjust("100 millis")
            // Sent after the gathering time, not at the next poll a second later.
            const first = yield* Ref.get(sent)
            expect(first.map((r) => [r.at, JSON.parse(r.body).type])).toEqual([[NOW + 100, "order_create"]])
            expect(JSON.parse(first[0]!.body).data.id).toBe(completed.body.order.id)

            expect((yield* post(`/orders/${completed.body.order.id}/confirm`)).status).toBe(200)
            yield* TestClock.adjust("100 millis")
            expect((yield* Ref.get(sent)).map((r) => [r.at, JSON.parse(r.body).type])).toEqual([
              [NOW + 100, "order_create"],
              [NOW + 200, "order_update"]
            ])
          }).pipe(Effect.provide(context))
        ))
      }))
    }))
})

describe("webhook sender worker (the background loop of role webhook_sender)", () => {
  type Step = number | "fail" | "die" | "slow"

  /**
   * The worker over a sender whose rounds follow `script` (a number: that many reports; "fail": a
   * storage error; "die": a defect; then empty rounds). Records the TestClock time of every round
   * and the messages logged.
   */
  const startWorker = (script: Array<Step>, config: Partial<AppConfigShape> = {}, lanes = 1) =>
    Effect.gen(function*() {
      const rounds: Array<number> = []
      const logged: Array<string> = []
      const report: DeliveryReport = { eventId: "evt_1", attempt: 1, outcome: "delivered", status: 200 }
      const deliverDue = Effect.gen(function*() {
        rounds.push(yield* Clock.currentTimeMillis)
        const step = script.shift() ?? 0
        if (step === "fail") return yield* Effect.fail(new StorageError({ reason: "unavailable", cause: "down" }))
        if (step === "die") return yield* Effect.die(new Error("bug in a round"))
        if (step === "slow") yield* Effect.sleep("10 seconds") // a receiver slow to answer
        if (step === "slow") return [report]
        return Array.from({ length: step }, () => report)
      })
      const logger = Logger.make(({ message }) => void logged.push(String(message)))
      const context = yield* Layer.build(
        webhookSenderWorker("1 second", lanes).pipe(
          Layer.provideMerge(OutboxSignalLive),
          Layer.provide(Layer.succeed(WebhookSender, WebhookSender.of({ deliverDue, batchSize: 2 }))),
          Layer.provide(Layer.succeed(AppConfig, testConfig(config))),
          Layer.provide(Logger.replace(Logger.defaultLogger, logger))
        )
      )
      yield* TestClock.adjust(0) // let the forked loop run its first round
      return { rounds, logged, signal: Context.get(context, OutboxSignal) }
    })

  it.scoped("a round every interval, at once again after one that found events; failures are logged and it goes on", () =>
    Effect.gen(function*() {
      const { logged, rounds } = yield* startWorker(["fail", "die", 2, 1])
      expect(rounds).toEqual([0])
      yield* TestClock.adjust("1 second")
      expect(rounds).toEqual([0, 1000]) // the failure did not stop the loop
      yield* TestClock.adjust("1 second")
      // Nor did the defect; 2 reports → another round at once, 1 → again, 0 → wait.
      expect(rounds).toEqual([0, 1000, 2000, 2000, 2000])
      yield* TestClock.adjust("3 seconds")
      expect(rounds).toEqual([0, 1000, 2000, 2000, 2000, 3000, 4000, 5000])
      expect(logged.filter((m) => m === "order event delivery round failed")).toHaveLength(2)
    }))

  it.scoped("events queued by this process wake the idle first lane after the gathering time; signals while it is busy wake it once", () =>
    Effect.gen(function*() {
      const { rounds, signal } = yield* startWorker([0, "slow", 0, 0, 0])
      expect(rounds).toEqual([0])
      yield* TestClock.adjust("300 millis")
      yield* signal.queued
      yield* TestClock.adjust("99 millis")
      expect(rounds).toEqual([0]) // gathering what else comes (100 ms)
      yield* TestClock.adjust("1 millis")
      // Woken at 400 instead of 1000, into a round slow to answer (10 s) that delivers an event.
      expect(rounds).toEqual([0, 400])
      for (let i = 0; i < 3; i++) yield* signal.queued
      yield* TestClock.adjust("10 seconds")
      // It goes again at once and finds nothing; the three signals of its busy time are one
      // wake-up: one more round after the gathering time.
      expect(rounds).toEqual([0, 400, 10_400])
      yield* TestClock.adjust("100 millis")
      expect(rounds).toEqual([0, 400, 10_400, 10_500])
      // Nothing signalled since: the next round is an interval later.
      yield* TestClock.adjust("999 millis")
      expect(rounds).toEqual([0, 400, 10_400, 10_500])
      yield* TestClock.adjust("1 millis")
      expect(rounds).toEqual([0, 400, 10_400, 10_500, 11_500])
    }))

  it.scoped("lanes: idle rounds spread over the interval; a lane held up by a slow round holds up no other", () =>
    Effect.gen(function*() {
      const { rounds } = yield* startWorker(["slow", 1, 2, 2, 1], {}, 2)
      expect(rounds).toEqual([0])
      yield* TestClock.adjust("500 millis")
      // The second lane's round found less than a batch: it waits an interval. Then two full
      // rounds: it goes again at once, until a round finds less than a batch.
      expect(rounds).toEqual([0, 500])
      yield* TestClock.adjust("1 second")
      expect(rounds).toEqual([0, 500, 1500, 1500, 1500])
      // The first lane waits on its slow round; the second goes on every interval.
      yield* TestClock.adjust("1 second")
      expect(rounds).toEqual([0, 500, 1500, 1500, 1500, 2500])
      // The slow round (begun at 0) found an event: its lane goes again at once when it ends.
      yield* TestClock.adjust("8 seconds")
      expect(rounds.filter((at) => at >= 9_000)).toEqual([9_500, 10_000, 10_500])
    }))

  it.scoped("a process without the webhook_sender role runs no rounds", () =>
    Effect.gen(function*() {
      const { rounds } = yield* startWorker([1], { roles: new Set(["checkout", "delegate", "webhook_receiver"]) })
      yield* TestClock.adjust("10 seconds")
      expect(rounds).toEqual([])
    }))

  it.effect("closing the scope stops the loop", () =>
    Effect.gen(function*() {
      const { rounds } = yield* startWorker([]).pipe(Effect.scoped)
      yield* TestClock.adjust("10 seconds")
      expect(rounds).toEqual([0])
    }))
})
