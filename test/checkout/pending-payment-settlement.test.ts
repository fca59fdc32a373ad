/**
 * A payment whose request died after step 1 of completing and was never retried, on every store:
 * the expiry sweep settles it once the session has been expired for the grace
 * (`src/checkout/payment-settlement-service.ts`): completed with its order when the charge was
 * made, expired with its stock back and the attempt declined when it was not. Within the grace
 * the session is left as it is.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PENDING_PAYMENT_GRACE_MILLIS } from "../../src/checkout/payment-settlement-service.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import { testConfig } from "../../src/platform/config.ts"
import { createReadySession, get, post } from "../support/http.ts"
import { approvedCharges, completeAndPayOnEveryStore, handlerPayment, tokenize } from "./complete-payment-fixtures.ts"

const TTL_MILLIS = testConfig().sessionTtlSeconds * 1000

const onHand = (productId: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(0)).pipe(
    Effect.map((levels) => levels.find((level) => level.productId === productId)?.onHand)
  )

const latestAttempt = (sessionId: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.readSessionForPayment(sessionId)).pipe(
    Effect.map((read) => Option.flatMap(read, (found) => found.latestAttempt)),
    Effect.map(Option.map((attempt) => [attempt.sequence, attempt.state]))
  )

completeAndPayOnEveryStore((run) => {
  describe("a payment left pending by its request", () => {
    it.effect("charged: completed with its order and event once expired for the grace, charged once", () =>
      run(
        Effect.gen(function*() {
          const checkout = yield* CheckoutService
          const before = yield* onHand("print-limited")
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(session.id)
          expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(500)
          expect(yield* approvedCharges).toHaveLength(1) // charged, not committed, and no retry comes

          // Due to expire, but within the grace: neither expired nor settled.
          yield* TestClock.adjust(TTL_MILLIS + 1_000)
          expect(yield* checkout.expireDue(50)).toBe(0)
          expect(yield* latestAttempt(session.id)).toEqual(Option.some([1, "pending"]))

          yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
          expect(yield* checkout.expireDue(50)).toBe(1)
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          expect(yield* latestAttempt(session.id)).toEqual(Option.some([1, "succeeded"]))
          expect(yield* approvedCharges).toHaveLength(1)
          const orders = yield* OrderStore
          const events = yield* orders.listEvents({ limit: 10 })
          expect(events.map((event) => event.type)).toEqual(["order_create"])
          const order = Option.getOrThrow(yield* orders.getOrder(events[0]!.orderId))
          expect(order.sessionId).toBe(session.id)
          expect(yield* onHand("print-limited")).toBe(before! - 1)
          // Settled once: the next sweep finds nothing, and a late retry is answered as completed.
          expect(yield* checkout.expireDue(50)).toBe(0)
          const late = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(late.status).toBe(409)
          expect(yield* approvedCharges).toHaveLength(1)
        }),
        { crash: true }
      ))

    for (const charged of ["no charge", "a declined charge"] as const) {
      it.effect(`${charged}: the attempt declined, the session expired, its stock back`, () =>
        run(Effect.gen(function*() {
          const checkout = yield* CheckoutService
          const store = yield* CheckoutStore
          const before = yield* onHand("print-limited")
          const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(created.id)
          // Step 1 committed (the attempt recorded with the session), then the process died.
          const { session } = Option.getOrThrow(yield* store.readSessionForPayment(created.id))
          const total = session.totals.find((line) => line.type === "total")!.amount
          yield* store.startPaymentAttempt(session, {
            sessionId: session.id,
            sequence: 1,
            idempotencyKey: `${session.id}:1`,
            amount: total,
            currency: session.currency,
            credentialRef: token,
            state: "pending",
            chargeId: undefined,
            createdAt: 0,
            updatedAt: 0
          })
          if (charged === "a declined charge") {
            // The processor declined it; the process died before recording the decline.
            yield* Effect.flatMap(ChargeStore, (charges) =>
              charges.recordCharge({
                idempotencyKey: `${session.id}:1`,
                id: "ch_declined",
                amount: total,
                currency: session.currency,
                outcome: "card_declined",
                createdAt: 0,
                authentication: undefined
              }))
          }
          expect(yield* onHand("print-limited")).toBe(before)

          yield* TestClock.adjust(TTL_MILLIS + PENDING_PAYMENT_GRACE_MILLIS + 1_000)
          expect(yield* checkout.expireDue(50)).toBe(1)
          expect((yield* get(`/checkout_sessions/${created.id}`)).body.status).toBe("expired")
          expect(yield* latestAttempt(created.id)).toEqual(Option.some([1, "declined"]))
          expect(yield* approvedCharges).toHaveLength(0)
          const orders = yield* OrderStore
          expect(yield* orders.listEvents({ limit: 10 })).toEqual([])
          expect(yield* checkout.expireDue(50)).toBe(0)
        })))
    }

    it.effect("a session without a pending payment expires in the batch beside one that waits its grace", () =>
      run(
        Effect.gen(function*() {
          const checkout = yield* CheckoutService
          const paying = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(paying.id)
          expect((yield* post(`/checkout_sessions/${paying.id}/complete`, handlerPayment(token))).status).toBe(500)
          const idle = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          yield* TestClock.adjust(TTL_MILLIS + 1_000)
          expect(yield* checkout.expireDue(50)).toBe(1)
          const store = yield* CheckoutStore
          const statuses = yield* Effect.forEach([paying.id, idle.id], (id) =>
            Effect.map(store.readSessionForPayment(id), Option.map((found) => found.session.status)))
          expect(statuses).toEqual([Option.some("ready_for_payment"), Option.some("expired")])
        }),
        { crash: true }
      ))
  })
})
