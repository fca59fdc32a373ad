/** The order-event sender's background worker: on the application, and its rounds and lanes on the TestClock. */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Logger, Ref, TestClock } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import {
  type DeliveryReport,
  WebhookSender,
  webhookSenderLayer,
  webhookSenderWorker
} from "../../src/orders/http/webhook-sender.ts"
import { OutboxSignal, OutboxSignalLive } from "../../src/orders/outbox-signal.ts"
import { WebhookTransport } from "../../src/orders/webhook-transport.ts"
import { AppConfig, type AppConfigShape } from "../../src/platform/config.ts"
import { createReadySession, paymentData, post, testApp } from "../support/http.ts"
import { testConfig } from "../support/test-config.ts"

const NOW = 1_767_225_600_000 // 2026-01-01T00:00:00Z

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
