/**
 * The exactly-once Stripe charge (`docs/concurrency.md`, "Stripe"), through HTTP against the fake
 * Stripe: under faults (500s, a timeout, a dropped connection after the charge), a crash at each step
 * followed by a client retry or by the settlement sweep, and 20 concurrent completes, the fake records
 * at most one succeeded PaymentIntent per session, and the order count matches.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Option, Redacted, TestClock } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PENDING_PAYMENT_GRACE_MILLIS } from "../../src/checkout/payment-settlement.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import type { FaultPoint } from "../../src/platform/fault-injection.ts"
import { makePointCrashes } from "../support/faults.ts"
import { post } from "../support/http.ts"
import {
  intentsOf,
  readyWithToken,
  runWith,
  sptPayment,
  stripeConfig,
  succeededOf,
  useFakeStripe
} from "./stripe-checkout-fixtures.ts"

const fake = useFakeStripe()

const complete = (id: string, token: string) =>
  post(`/checkout_sessions/${id}/complete`, { payment_data: sptPayment(token) })

const orderCount = Effect.flatMap(OrderStore, (orders) => orders.listEvents({ limit: 100 })).pipe(
  Effect.map((events) => events.filter((event) => event.type === "order_create").length)
)

const attemptState = (id: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.readSessionForPayment(id)).pipe(
    Effect.map((read) => Option.getOrUndefined(Option.flatMap(read, (found) => found.latestAttempt))?.state)
  )

const CONFIRM = /^\/v1\/payment_intents\/pi_[^/]+\/confirm$/

const sweep = Effect.zipRight(
  TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS + 1000),
  Effect.flatMap(CheckoutService, (checkout) => checkout.expireDue(50))
)

describe("Stripe: one charge per session under faults", () => {
  it.effect("500, then success: the SDK retries under one key; one PaymentIntent, the order", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        fake().fail({ path: "/v1/payment_intents", method: "POST", with: "500" })
        fake().fail({ path: CONFIRM, with: "500" })
        const paid = yield* complete(session.id, token)
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        const confirms = fake().requests({ method: "POST" }).filter((r) =>
          CONFIRM.test(r.path) &&
          r.idempotencyKey === `${session.id}:1:confirm`
        )
        expect(confirms.map((r) => r.status)).toEqual([500, 200])
        expect(yield* orderCount).toBe(1)
      })
    ))

  it.effect("500 forever: 503 with Retry-After, the attempt pending; a later retry charges once", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        fake().fail({ path: CONFIRM, with: "500", times: 3 })
        const unavailable = yield* complete(session.id, token)
        expect(unavailable.status).toBe(503)
        expect(unavailable.body).toMatchObject({ type: "service_unavailable", code: "service_unavailable" })
        expect(Number(unavailable.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(yield* attemptState(session.id)).toBe("pending")
        expect(succeededOf(fake(), session.id)).toHaveLength(0)
        const paid = yield* complete(session.id, token)
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(
          new Set(
            fake().requests().filter((r) => CONFIRM.test(r.path)).filter((r) =>
              r.idempotencyKey?.startsWith(session.id)
            ).map((r) => r.idempotencyKey)
          )
        ).toEqual(new Set([`${session.id}:1:confirm`]))
        expect(yield* orderCount).toBe(1)
      })
    ))

  it.effect("a timeout after the confirm ran: the SDK's retry gets the saved answer, one charge", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        fake().fail({ path: CONFIRM, with: "timeout" })
        const paid = yield* complete(session.id, token)
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(fake().charges().filter((c) => c.payment_intent === intentsOf(fake(), session.id)[0]!.id))
          .toHaveLength(1)
        expect(yield* orderCount).toBe(1)
      }),
      { timeoutMillis: 300 }
    ))

  it.effect("connections dropped after the charge was made: 503; the client's retry finds the same PaymentIntent", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        fake().fail({ path: CONFIRM, with: "drop-after-processing", times: 3 })
        const lost = yield* complete(session.id, token)
        expect(lost.status).toBe(503)
        expect(succeededOf(fake(), session.id)).toHaveLength(1)
        const paid = yield* complete(session.id, token)
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(paid.body.order.id).toMatch(/^ord_/)
        expect(yield* orderCount).toBe(1)
      })
    ))

  it.effect("20 concurrent completes of one session: one succeeded PaymentIntent, one order", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        const answers = yield* Effect.forEach(
          Array.from({ length: 20 }),
          () => complete(session.id, token),
          { concurrency: "unbounded" }
        )
        const statuses = answers.map((answer) => answer.status)
        expect(statuses.every((status) => status === 200 || status === 409)).toBe(true)
        expect(statuses).toContain(200)
        const orders = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.order.id))
        expect(orders.size).toBe(1)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(yield* orderCount).toBe(1)
        const after = yield* complete(session.id, token)
        expect([after.status, after.body.code]).toEqual([409, "session_completed"])
      })
    ))
})

describe("Stripe: rate-limited or unreachable", () => {
  it.effect("a 429 lock timeout and a rate limit are retried under the same key; then the order", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        fake().fail({ path: "/v1/payment_intents", method: "POST", with: "429" })
        fake().fail({ path: CONFIRM, with: "rate_limit", times: 2 })
        const paid = yield* complete(session.id, token)
        expect(paid.status).toBe(200)
        const confirms = fake().requests().filter((r) =>
          CONFIRM.test(r.path) && r.idempotencyKey?.startsWith(session.id)
        )
        expect(confirms.map((r) => [r.status, r.idempotencyKey])).toEqual([
          [429, `${session.id}:1:confirm`],
          [429, `${session.id}:1:confirm`],
          [200, `${session.id}:1:confirm`]
        ])
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
      })
    ))

  it.effect("rate-limited past the retries: 503 with Retry-After; the retry charges once", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        fake().fail({ path: CONFIRM, with: "rate_limit", times: 3 })
        const limited = yield* complete(session.id, token)
        expect(limited.status).toBe(503)
        expect(limited.headers.get("retry-after")).toBe("5")
        const paid = yield* complete(session.id, token)
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(yield* orderCount).toBe(1)
      })
    ))

  it.effect("Stripe unreachable: 503 with Retry-After, the attempt pending, nothing charged", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        const unreachable = yield* complete(session.id, token)
        expect(unreachable.status).toBe(503)
        expect(unreachable.headers.get("retry-after")).toBe("5")
        expect(yield* attemptState(session.id)).toBe("pending")
        expect(intentsOf(fake(), session.id)).toHaveLength(0)
      }),
      {
        config: {
          stripe: { ...stripeConfig(fake()).stripe!, apiBase: { protocol: "http", host: "127.0.0.1", port: 9 } }
        }
      }
    ))
})

describe("Stripe: a crash between steps", () => {
  const crashed = (point: FaultPoint) => {
    const crashes = makePointCrashes()
    return {
      crashes,
      options: { faults: crashes.layer },
      crashAt: (sessionId: string, token: string) =>
        Effect.gen(function*() {
          yield* crashes.arm(point)
          const died = yield* complete(sessionId, token)
          expect(died.status).toBe(500)
          expect(crashes.crashes()).toEqual([point])
          expect(yield* attemptState(sessionId)).toBe("pending")
        })
    }
  }

  for (const point of ["stripe.after-create", "stripe.after-confirm"] as const) {
    it.effect(`at ${point}, then the client's retry: the one PaymentIntent, the order`, () => {
      const { crashAt, options } = crashed(point)
      return runWith(
        fake(),
        Effect.gen(function*() {
          const { session, token } = yield* readyWithToken(fake())
          yield* crashAt(session.id, token)
          const paid = yield* complete(session.id, token)
          expect(paid.status).toBe(200)
          expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
          expect(yield* orderCount).toBe(1)
        }),
        options
      )
    })
  }

  it.effect("at stripe.after-create, then the sweep: the unconfirmed PaymentIntent canceled, payable again", () => {
    const { crashAt, options } = crashed("stripe.after-create")
    return runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        yield* crashAt(session.id, token)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["requires_confirmation"])
        expect(yield* sweep).toBe(1)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["canceled"])
        expect(yield* attemptState(session.id)).toBe("declined")
        expect(yield* orderCount).toBe(0)
        // The stalled request's key is closed: its retry would be refused, never charged.
        const paid = yield* complete(session.id, fake().grantToken().id)
        expect(paid.status).toBe(200)
        expect(succeededOf(fake(), session.id)).toHaveLength(1)
        expect(yield* orderCount).toBe(1)
      }),
      options
    )
  })

  it.effect("at stripe.after-confirm, then the sweep: the confirmed PaymentIntent becomes the order", () => {
    const { crashAt, options } = crashed("stripe.after-confirm")
    return runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        yield* crashAt(session.id, token)
        expect(yield* sweep).toBe(1)
        expect(yield* attemptState(session.id)).toBe("succeeded")
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(yield* orderCount).toBe(1)
        const after = yield* complete(session.id, token)
        expect(after.status).toBe(409)
        expect(succeededOf(fake(), session.id)).toHaveLength(1)
      }),
      options
    )
  })

  it.effect("a processing payment is left pending by the sweep until Stripe settles it", () => {
    const { crashAt, options } = crashed("stripe.after-confirm")
    return runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake(), { behavior: "processing" })
        yield* crashAt(session.id, token)
        expect(yield* sweep).toBe(0)
        expect(yield* attemptState(session.id)).toBe("pending")
        fake().settleProcessing(intentsOf(fake(), session.id)[0]!.id, "succeeded")
        expect(yield* sweep).toBe(1)
        expect(yield* attemptState(session.id)).toBe("succeeded")
        expect(yield* orderCount).toBe(1)
      }),
      options
    )
  })

  it.effect("a create that never went through: the sweep makes at most an unconfirmed PaymentIntent, and cancels it", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        // Step 1 of a request that stalls before its charge: the attempt pending, nothing at Stripe.
        fake().fail({ path: "/v1/payment_intents", method: "POST", with: "500", times: 3 })
        expect((yield* complete(session.id, token)).status).toBe(503)
        expect(intentsOf(fake(), session.id)).toHaveLength(0)
        expect(yield* sweep).toBe(1)
        expect(yield* attemptState(session.id)).toBe("declined")
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["canceled"])
      })
    ))
})

describe("Stripe: the secret key", () => {
  it.effect("never in a log line or a response, even when Stripe refuses it", () => {
    const logged: Array<string> = []
    const logger = Logger.make(({ message }) => void logged.push(JSON.stringify(message)))
    const wrongKey = "sk_test_wrongwrongwrongwrongwrong1234"
    return runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        const refused = yield* complete(session.id, token)
        expect(refused.status).toBe(503)
        expect(refused.text).not.toContain("wrong")
        expect(logged.some((line) => line.includes("STRIPE_SECRET_KEY"))).toBe(true)
        for (const line of logged) {
          expect(line).not.toContain(wrongKey)
          expect(line).not.toContain(wrongKey.slice(-4))
          expect(line).not.toContain(fake().secretKey)
        }
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))),
      {
        config: {
          stripe: { ...stripeConfig(fake()).stripe!, secretKey: Option.some(Redacted.make(wrongKey)) }
        }
      }
    )
  })
})
