/**
 * The Stripe charge's exactly-once cases on every store (memory, SQL on embedded PGlite, SQL on
 * PostgreSQL when TEST_DATABASE_URL is set), all stores on one database: 20 concurrent completes,
 * and a crash after the confirm settled by the sweep, each with one succeeded PaymentIntent and one
 * order.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { PENDING_PAYMENT_GRACE_MILLIS } from "../../src/checkout/payment-settlement.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { NOW } from "../support/acp-fixtures.ts"
import { makePointCrashes } from "../support/faults.ts"
import { post, type TestAppOptions } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import { intentsOf, readyWithToken, sptPayment, stripeApp, useFakeStripe } from "./stripe-checkout-fixtures.ts"

const fake = useFakeStripe()

const complete = (id: string, token: string) =>
  post(`/checkout_sessions/${id}/complete`, { payment_data: sptPayment(token) })

const orderCount = Effect.flatMap(OrderStore, (orders) => orders.listEvents({ limit: 100 })).pipe(
  Effect.map((events) => events.filter((event) => event.type === "order_create").length)
)

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`Stripe exactly once on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()
    const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
      Effect.flatMap(storeUnderTest.freshStores, (stores) =>
        Effect.provide(
          Effect.zipRight(TestClock.setTime(NOW), effect),
          stripeApp(fake(), { ...stores, ...options })
        )) as Effect.Effect<A, E>

    it.effect("20 concurrent completes: one succeeded PaymentIntent, one order", () =>
      run(Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake())
        const answers = yield* Effect.forEach(
          Array.from({ length: 20 }),
          () => complete(session.id, token),
          { concurrency: "unbounded" }
        )
        expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true)
        expect(new Set(answers.filter((a) => a.status === 200).map((a) => a.body.order.id)).size).toBe(1)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
        expect(yield* orderCount).toBe(1)
      })), 60_000)

    it.effect("a crash after the confirm, then the sweep: the order, one charge", () => {
      const crashes = makePointCrashes()
      return run(
        Effect.gen(function*() {
          const { session, token } = yield* readyWithToken(fake())
          yield* crashes.arm("stripe.after-confirm")
          expect((yield* complete(session.id, token)).status).toBe(500)
          yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS + 1000)
          expect(yield* Effect.flatMap(CheckoutService, (checkout) => checkout.expireDue(50))).toBe(1)
          expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["succeeded"])
          expect(yield* orderCount).toBe(1)
          expect((yield* complete(session.id, token)).status).toBe(409)
        }),
        { faults: crashes.layer }
      )
    }, 60_000)
  })
}
