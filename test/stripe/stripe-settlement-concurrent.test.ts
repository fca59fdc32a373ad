/**
 * Settling a Stripe payment its request left pending, on every store (memory, SQL on embedded PGlite,
 * SQL on PostgreSQL when TEST_DATABASE_URL is set): Stripe is asked outside any transaction, so a
 * request is served while Stripe holds its answer (the embedded store has one connection), and a sweep
 * and a webhook settling one attempt at once apply one outcome: one order for a confirmed PaymentIntent,
 * an unconfirmed one canceled and the session payable.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock, TestServices } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PENDING_PAYMENT_GRACE_MILLIS } from "../../src/checkout/payment-settlement.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import type { FaultPoint } from "../../src/platform/fault-injection.ts"
import { NOW } from "../support/acp-fixtures.ts"
import { makePointCrashes } from "../support/faults.ts"
import { createReadySession, get, post } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import {
  intentsOf,
  readyWithToken,
  sptPayment,
  stripeApp,
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

const RETRIEVE = /^\/v1\/payment_intents\/pi_[^/]+$/

/** Waits in real time until the fake Stripe received a retrieve of one of `sessionId`'s PaymentIntents. */
const retrieveReceived = (sessionId: string) =>
  TestServices.provideLive(
    Effect.gen(function*() {
      const ids = new Set(intentsOf(fake(), sessionId).map((intent) => intent.id))
      for (let tries = 0; tries < 500; tries++) {
        if (fake().requests({ method: "GET" }).some((r) => ids.has(r.path.slice("/v1/payment_intents/".length)))) {
          return
        }
        yield* Effect.sleep("10 millis")
      }
      return yield* Effect.dieMessage("the settlement never asked Stripe")
    })
  )

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`Stripe settlement on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()

    /** A fresh application paying through the fake; its request crashed at `point`, the attempt pending. */
    const crashedAt = <A, E>(point: FaultPoint, effect: (paying: { id: string }) => Effect.Effect<A, E, any>) => {
      const crashes = makePointCrashes()
      return Effect.flatMap(storeUnderTest.freshStores, (stores) =>
        Effect.provide(
          Effect.gen(function*() {
            yield* TestClock.setTime(NOW)
            const { session, token } = yield* readyWithToken(fake())
            yield* crashes.arm(point)
            expect((yield* complete(session.id, token)).status).toBe(500)
            expect(yield* attemptState(session.id)).toBe("pending")
            return yield* effect(session)
          }),
          stripeApp(fake(), { ...stores, faults: crashes.layer })
        )) as Effect.Effect<A, E>
    }

    it.effect(
      "while Stripe holds its answer, another request is served; then the order",
      () =>
        crashedAt("stripe.after-confirm", (paying) =>
          Effect.gen(function*() {
            const checkout = yield* CheckoutService
            fake().fail({ path: RETRIEVE, method: "GET", with: "delay", ms: 3_000 })
            const settling = yield* Effect.fork(checkout.settlePayment(paying.id))
            yield* retrieveReceived(paying.id)
            // Served within Stripe's delay: the settlement holds no connection, lock or critical section.
            const other = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
            expect(other.status).toBe("ready_for_payment")
            expect((yield* get(`/checkout_sessions/${paying.id}`)).body.status).toBe("ready_for_payment")
            expect(yield* Fiber.poll(settling)).toEqual(Option.none())
            expect(yield* Fiber.join(settling)).toBe("completed")
            expect(yield* attemptState(paying.id)).toBe("succeeded")
            expect(yield* orderCount).toBe(1)
          })),
      60_000
    )

    const sweepAndWebhook = (id: string) =>
      Effect.gen(function*() {
        const checkout = yield* CheckoutService
        yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS + 1_000)
        const [swept, settled] = yield* Effect.all([checkout.expireDue(50), checkout.settlePayment(id)], {
          concurrency: "unbounded"
        })
        return { swept, settled }
      })

    it.effect(
      "a sweep and a webhook at once on a confirmed PaymentIntent: one order, one charge",
      () =>
        crashedAt("stripe.after-confirm", (paying) =>
          Effect.gen(function*() {
            const { settled, swept } = yield* sweepAndWebhook(paying.id)
            expect([[1, "none"], [0, "completed"]]).toContainEqual([swept, settled])
            expect(yield* attemptState(paying.id)).toBe("succeeded")
            expect(intentsOf(fake(), paying.id).map((pi) => pi.status)).toEqual(["succeeded"])
            expect(yield* orderCount).toBe(1)
            expect(yield* Effect.flatMap(CheckoutService, (checkout) => checkout.expireDue(50))).toBe(0)
          })),
      60_000
    )

    it.effect(
      "a sweep and a webhook at once on an unconfirmed PaymentIntent: canceled, payable once",
      () =>
        crashedAt("stripe.after-create", (paying) =>
          Effect.gen(function*() {
            const { settled, swept } = yield* sweepAndWebhook(paying.id)
            expect([[1, "none"], [0, "payable"]]).toContainEqual([swept, settled])
            expect(yield* attemptState(paying.id)).toBe("declined")
            expect(intentsOf(fake(), paying.id).map((pi) => pi.status)).toEqual(["canceled"])
            expect(yield* orderCount).toBe(0)
            const paid = yield* complete(paying.id, fake().grantToken().id)
            expect(paid.status).toBe(200)
            expect(succeededOf(fake(), paying.id)).toHaveLength(1)
            expect(yield* orderCount).toBe(1)
          })),
      60_000
    )
  })
}
