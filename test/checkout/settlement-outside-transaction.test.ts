/**
 * The settlement asks the provider outside any transaction (`src/checkout/payment-settlement.ts`), on
 * every store, with a provider that holds its answer until the test releases it: another request
 * completes meanwhile (on the embedded store, whose one connection a transaction would hold, and in
 * memory, whose transactions are one critical section), and a sweep and a webhook settling one attempt
 * at once both ask the provider and apply its answer once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, TestClock, TestServices } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PENDING_PAYMENT_GRACE_MILLIS } from "../../src/checkout/payment-settlement.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { PaymentPending } from "../../src/payments/model/payment.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { createReadySession, get, paymentData, post, testApp } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"

/** What the provider's settlement answers, once released; `arrived` opens when `expected` calls are in it. */
interface Held {
  readonly outcome: "charged" | "none"
  readonly expected: number
  readonly arrived: Effect.Latch
  readonly release: Effect.Latch
  calls: number
}

const holding = (outcome: Held["outcome"], expected = 1): Held => ({
  outcome,
  expected,
  arrived: Effect.unsafeMakeLatch(false),
  release: Effect.unsafeMakeLatch(false),
  calls: 0
})

/** A provider whose charge cannot say (the attempt stays pending) and whose settlement waits for `held.release`. */
const heldProvider = (held: Held) =>
  Layer.succeed(PaymentProvider, {
    threeDSecure: false,
    authorize: () => Effect.void,
    charge: () => Effect.fail(new PaymentPending({ reason: "unavailable", retryAfterSeconds: 5 })),
    release: () => Effect.void,
    settleCharge: ({ amount, currency }) =>
      Effect.suspend(() => {
        held.calls++
        return held.calls >= held.expected ? held.arrived.open : Effect.void
      }).pipe(
        Effect.zipRight(held.release.await),
        Effect.as(
          held.outcome === "charged"
            ? Option.some(Effect.runSync(Effect.either(Effect.succeed({ id: "ch_held", amount, currency }))))
            : Option.none()
        )
      )
  })

/** `effect`, failing after a few seconds of real time (the test's clock may stand still). */
const within = <A, E, R>(effect: Effect.Effect<A, E, R>, what: string) =>
  TestServices.provideLive(
    Effect.timeoutFail(effect, { duration: Duration.seconds(10), onTimeout: () => new Error(`${what}: timed out`) })
  )

const attemptOf = (id: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.readSessionForPayment(id)).pipe(
    Effect.map((read) => Option.getOrUndefined(Option.flatMap(read, (found) => found.latestAttempt))?.state)
  )

const orderCount = Effect.flatMap(OrderStore, (orders) => orders.listEvents({ limit: 100 })).pipe(
  Effect.map((events) => events.filter((event) => event.type === "order_create").length)
)

/** A session whose payment its request left pending (the provider could not say). */
const pendingPayment = Effect.gen(function*() {
  const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
  expect((yield* post(`/checkout_sessions/${session.id}/complete`, { payment_data: paymentData })).status).toBe(503)
  expect(yield* attemptOf(session.id)).toBe("pending")
  return session
})

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`settling outside the transaction on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()
    const run = <A, E>(held: Held, effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(
        storeUnderTest.freshStores,
        (stores) => Effect.provide(effect, testApp({ ...stores, payments: heldProvider(held) }))
      ) as Effect.Effect<A, E>

    it.effect("while the provider holds its answer, other requests are served; then the order", () => {
      const held = holding("charged")
      return run(
        held,
        Effect.gen(function*() {
          const checkout = yield* CheckoutService
          const paying = yield* pendingPayment
          const settling = yield* Effect.fork(checkout.settlePayment(paying.id))
          yield* within(held.arrived.await, "the settlement's provider call")
          // Each needs the database: on the embedded store its one connection, in memory its critical section.
          const other = yield* within(createReadySession([{ id: "mug-ceramic", quantity: 1 }]), "a create")
          expect(other.status).toBe("ready_for_payment")
          const read = yield* within(get(`/checkout_sessions/${paying.id}`), "a read of the session being settled")
          expect(read.body.status).toBe("ready_for_payment")
          expect(yield* Fiber.poll(settling)).toEqual(Option.none())

          yield* held.release.open
          expect(yield* Fiber.join(settling)).toBe("completed")
          expect((yield* get(`/checkout_sessions/${paying.id}`)).body.status).toBe("completed")
          expect(yield* attemptOf(paying.id)).toBe("succeeded")
          expect(yield* orderCount).toBe(1)
        })
      )
    })

    for (const outcome of ["charged", "none"] as const) {
      it.effect(`a sweep and a webhook settling one attempt at once (${outcome}): one outcome applied once`, () => {
        const held = holding(outcome, 2)
        return run(
          held,
          Effect.gen(function*() {
            const checkout = yield* CheckoutService
            const paying = yield* pendingPayment
            yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
            const sweep = yield* Effect.fork(checkout.expireDue(50))
            const webhook = yield* Effect.fork(checkout.settlePayment(paying.id))
            // Both are in the provider's call at once: neither holds the session's lock meanwhile.
            yield* within(held.arrived.await, "both settlements' provider calls")
            yield* held.release.open
            const swept = yield* Fiber.join(sweep)
            const settled = yield* Fiber.join(webhook)
            const applied = outcome === "charged" ? "completed" : "payable"
            expect([[1, "none"], [0, applied]]).toContainEqual([swept, settled])
            expect(yield* attemptOf(paying.id)).toBe(outcome === "charged" ? "succeeded" : "declined")
            expect((yield* get(`/checkout_sessions/${paying.id}`)).body.status).toBe(
              outcome === "charged" ? "completed" : "ready_for_payment"
            )
            expect(yield* orderCount).toBe(outcome === "charged" ? 1 : 0)
            // Settled: nothing is left for a later sweep.
            expect(yield* checkout.expireDue(50)).toBe(0)
            expect(held.calls).toBe(2)
          })
        )
      })
    }
  })
}
