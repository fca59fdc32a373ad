/**
 * A payment whose request died after step 1 of completing and was never retried, on every store:
 * the sweep settles it once the session has not been written for the grace
 * (`src/checkout/payment-settlement.ts`): completed with its order when the charge was
 * made; payable again, the attempt declined, when it was not (with the decline's message when
 * declined); expired with its stock back when past its expiry. Within the grace nothing changes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Logger, Option, TestClock } from "effect"
import { PaymentsLive } from "../../src/app/server.ts"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PENDING_PAYMENT_GRACE_MILLIS } from "../../src/checkout/payment-settlement.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { VOIDED_KEY_MESSAGE } from "../../src/payments/builtin-payment-processor.ts"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { createReadySession, get, post } from "../support/http.ts"
import { testConfig } from "../support/test-config.ts"
import {
  approvedCharges,
  completeAndPayOnEveryStore,
  handlerPayment,
  tokenize,
  type TokenOptions
} from "./complete-payment-fixtures.ts"

const TTL_MILLIS = testConfig().sessionTtlSeconds * 1000

const totalOf = (session: { readonly totals: ReadonlyArray<{ type: string; amount: number }> }) =>
  session.totals.find((line) => line.type === "total")!.amount

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
  /** Step 1 committed (the attempt recorded with the session), then the process died. */
  const pendingAttempt = (sessionId: string, token: string) =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const { session } = Option.getOrThrow(yield* store.readSessionForPayment(sessionId))
      const total = session.totals.find((line) => line.type === "total")!.amount
      yield* store.startPaymentAttempt(session, {
        sessionId,
        sequence: 1,
        idempotencyKey: `${sessionId}:1`,
        amount: total,
        currency: session.currency,
        credentialRef: token,
        state: "pending",
        chargeId: undefined,
        createdAt: yield* Clock.currentTimeMillis,
        updatedAt: yield* Clock.currentTimeMillis
      })
      return { total, currency: session.currency }
    })

  /**
   * `change` of the stored session, written as a process of the release before this one wrote it:
   * that release did not refuse changes while a payment was pending (a rolling deploy runs both).
   */
  const writtenByEarlierRelease = (sessionId: string, change: (session: Session) => Session) =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const changed = change(Option.getOrThrow(yield* store.readSessionForPayment(sessionId)).session)
      yield* store.sessions.update(changed)
      return changed
    })

  /** A sweep of the checkout service, with the messages it logged. */
  const sweepLogging = Effect.gen(function*() {
    const logged: Array<string> = []
    const logger = Logger.make(({ message }) => void logged.push(String(message)))
    const settled = yield* Effect.flatMap(CheckoutService, (checkout) => checkout.expireDue(50)).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return { logged, settled }
  })

  /** A complete whose process died after the charge, before its commit (the run's `crash`). */
  const crashedPaymentWith = (options: TokenOptions) =>
    Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
      const token = yield* tokenize(session.id, options)
      expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(500)
      return { session, token }
    })
  const crashedPayment = crashedPaymentWith({})

  describe("a payment left pending by its request", () => {
    it.effect("charged: completed with its order and event once the grace has passed, charged once", () =>
      run(
        Effect.gen(function*() {
          const checkout = yield* CheckoutService
          const before = yield* onHand("print-limited")
          const { session, token } = yield* crashedPayment
          expect(yield* approvedCharges).toHaveLength(1) // charged, not committed, and no retry comes

          // Within the grace: nothing settled (a request could still be charging).
          yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS - 1_000)
          expect(yield* checkout.expireDue(50)).toBe(0)
          expect(yield* latestAttempt(session.id)).toEqual(Option.some([1, "pending"]))

          yield* TestClock.adjust(2_000)
          expect(yield* checkout.expireDue(50)).toBe(1)
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          expect(yield* latestAttempt(session.id)).toEqual(Option.some([1, "succeeded"]))
          expect(yield* approvedCharges).toHaveLength(1)
          const orders = yield* OrderStore
          const events = yield* orders.listEvents({ limit: 10 })
          expect(events.map((event) => event.type)).toEqual(["order_create"])
          expect(Option.getOrThrow(yield* orders.getOrder(events[0]!.orderId)).sessionId).toBe(session.id)
          expect(yield* onHand("print-limited")).toBe(before! - 1)
          // Settled once: the next sweep finds nothing, and a late retry is answered as completed.
          expect(yield* checkout.expireDue(50)).toBe(0)
          const late = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(late.status).toBe(409)
          expect(yield* approvedCharges).toHaveLength(1)
        }),
        { crash: true }
      ))

    it.effect("a retry its token's allowance no longer allows: 409 in flight, no decline; settled as charged", () =>
      run(
        Effect.gen(function*() {
          // The allowance ends two minutes in; the retry comes after it, the charge already made.
          const { session, token } = yield* crashedPaymentWith({ expiresAt: new Date(120_000).toISOString() })
          yield* TestClock.adjust(180_000)
          const retry = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(retry.status).toBe(409)
          expect(retry.body.code).toBe("idempotency_in_flight")
          expect(retry.headers.get("retry-after")).not.toBeNull()
          // Nothing recorded: not a decline, and the attempt still pending.
          const unchanged = yield* get(`/checkout_sessions/${session.id}`)
          expect(unchanged.body.status).toBe("ready_for_payment")
          expect(unchanged.body.messages).toEqual([])
          expect(yield* latestAttempt(session.id)).toEqual(Option.some([1, "pending"]))

          yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
          expect((yield* sweepLogging).settled).toBe(1)
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          expect(yield* approvedCharges).toHaveLength(1)
        }),
        { crash: true }
      ))

    it.effect("past the session's expiry: a retry 409 in flight, a read not expired; settled charged or not", () =>
      run(
        Effect.gen(function*() {
          const { session: charged, token } = yield* crashedPayment
          const unpaid = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const unpaidToken = yield* tokenize(unpaid.id)
          yield* pendingAttempt(unpaid.id, unpaidToken)
          yield* TestClock.adjust(TTL_MILLIS + 1_000)
          for (const [id, credential] of [[charged.id, token], [unpaid.id, unpaidToken]] as const) {
            const retry = yield* post(`/checkout_sessions/${id}/complete`, handlerPayment(credential))
            expect([retry.status, retry.body.code]).toEqual([409, "idempotency_in_flight"])
            expect(yield* latestAttempt(id)).toEqual(Option.some([1, "pending"]))
            // Shown as stored, not expired: the payment under way may still complete it.
            expect((yield* get(`/checkout_sessions/${id}`)).body.status).toBe("ready_for_payment")
          }
          expect((yield* sweepLogging).settled).toBe(2)
          expect((yield* get(`/checkout_sessions/${charged.id}`)).body.status).toBe("completed")
          expect((yield* get(`/checkout_sessions/${unpaid.id}`)).body.status).toBe("expired")
          expect(yield* approvedCharges).toHaveLength(1)
        }),
        { crash: true }
      ))

    it.effect("charged, then the session written to another total by an earlier release: completed, logged", () =>
      run(
        Effect.gen(function*() {
          const { session } = yield* crashedPayment
          const changed = yield* writtenByEarlierRelease(session.id, (stored) => ({
            ...stored,
            totals: stored.totals.map((line) => line.type === "total" ? { ...line, amount: line.amount + 500 } : line)
          }))
          yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
          const { logged, settled } = yield* sweepLogging
          expect(settled).toBe(1)
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          expect(logged).toEqual([
            `settled payment ${session.id}:1: charged ${totalOf(session)} usd, the session's total is now ${
              totalOf(changed)
            }; reconcile the order`
          ])
        }),
        { crash: true }
      ))

    it.effect("charged, on a session an earlier release canceled: recorded as charged, the refund logged", () =>
      run(
        Effect.gen(function*() {
          const { session } = yield* crashedPayment
          const canceled = (stored: Session): Session => ({ ...stored, status: "canceled" })
          // The buyer is charged and the session has no order.
          yield* writtenByEarlierRelease(session.id, canceled)
          // A second such session, not charged: its attempt is simply declined.
          const other = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          yield* pendingAttempt(other.id, "tok_visa")
          yield* writtenByEarlierRelease(other.id, canceled)
          yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
          const { logged, settled } = yield* sweepLogging
          expect(settled).toBe(2)
          expect(yield* latestAttempt(session.id)).toEqual(Option.some([1, "succeeded"]))
          expect(yield* latestAttempt(other.id)).toEqual(Option.some([1, "declined"]))
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("canceled")
          expect(logged).toEqual([
            `settled payment ${session.id}:1: charged ${
              totalOf(session)
            } usd for a session canceled, with no order; refund it`
          ])
          // Settled: the next sweep finds neither.
          expect((yield* sweepLogging).settled).toBe(0)
          const store = yield* CheckoutStore
          expect(yield* store.sessionsWithPaymentPendingSince(yield* Clock.currentTimeMillis, 50)).toEqual([])
        }),
        { crash: true }
      ))

    it.effect("not charged: the attempt declined and the session payable again, with the same token", () =>
      run(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        const token = yield* tokenize(created.id)
        yield* pendingAttempt(created.id, token)
        // Another credential is refused while the attempt is pending.
        const other = yield* post(`/checkout_sessions/${created.id}/complete`, {
          payment_data: { token: "tok_visa", provider: "stripe" }
        })
        expect(other.body.code).toBe("idempotency_in_flight")

        yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
        expect(yield* checkout.expireDue(50)).toBe(1)
        expect(yield* latestAttempt(created.id)).toEqual(Option.some([1, "declined"]))
        const payable = yield* get(`/checkout_sessions/${created.id}`)
        expect(payable.body.status).toBe("ready_for_payment")
        expect(payable.body.messages).toEqual([])
        expect(yield* approvedCharges).toHaveLength(0)
        expect(yield* checkout.expireDue(50)).toBe(0)

        const paid = yield* post(`/checkout_sessions/${created.id}/complete`, handlerPayment(token))
        expect(paid.status).toBe(200)
        expect(yield* latestAttempt(created.id)).toEqual(Option.some([2, "succeeded"]))
        expect(yield* approvedCharges).toHaveLength(1)
      })))

    it.effect("not charged, then the request's own charge comes late: refused, nothing charged; paying again charges once", () =>
      run(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        // The application's processor, over the same stores (the application keeps its own private).
        const payments = yield* Effect.provide(PaymentProvider, PaymentsLive)
        const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        const token = yield* tokenize(created.id)
        const { currency, total } = yield* pendingAttempt(created.id, token)
        yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
        expect(yield* checkout.expireDue(50)).toBe(1)
        expect(yield* latestAttempt(created.id)).toEqual(Option.some([1, "declined"]))

        // The request that began the attempt stalled, and reaches its charge only now: the
        // settlement closed the key, so the session made payable again is not charged by it.
        const late = {
          sessionId: created.id,
          amount: total,
          currency,
          credential: { kind: "legacy", provider: "stripe", token } as const,
          credentialRef: token,
          idempotencyKey: `${created.id}:1`
        }
        const refused = yield* Effect.flip(payments.charge(late))
        expect([refused._tag, refused.message]).toEqual(["PaymentRejected", VOIDED_KEY_MESSAGE])
        expect(yield* payments.settleCharge(late)).toEqual(Option.none())
        expect(yield* approvedCharges).toHaveLength(0)

        const paid = yield* post(`/checkout_sessions/${created.id}/complete`, handlerPayment(token))
        expect(paid.status).toBe(200)
        expect(yield* latestAttempt(created.id)).toEqual(Option.some([2, "succeeded"]))
        expect(yield* approvedCharges).toHaveLength(1)
      })))

    it.effect("a request that stalls past the grace before its charge: 422, nothing charged; paying again charges once", () => {
      let settle: Effect.Effect<void> = Effect.void
      return run(
        Effect.gen(function*() {
          const checkout = yield* CheckoutService
          settle = Effect.zipRight(TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS), checkout.expireDue(50)).pipe(
            Effect.flatMap((settled) => Effect.sync(() => expect(settled).toBe(1))),
            Effect.orDie
          )
          const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(created.id)
          const stalled = yield* post(`/checkout_sessions/${created.id}/complete`, handlerPayment(token))
          expect([stalled.status, stalled.body.code, stalled.body.message]).toEqual([
            422,
            "payment_declined",
            VOIDED_KEY_MESSAGE
          ])
          expect(yield* latestAttempt(created.id)).toEqual(Option.some([1, "declined"]))
          expect(yield* approvedCharges).toHaveLength(0)

          const paid = yield* post(`/checkout_sessions/${created.id}/complete`, handlerPayment(token))
          expect(paid.status).toBe(200)
          expect(yield* approvedCharges).toHaveLength(1)
        }),
        { beforeFirstCharge: () => settle }
      )
    })

    it.effect("a declined charge: recorded as a decline, the session payable with its message", () =>
      run(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        const token = yield* tokenize(created.id)
        const { currency, total } = yield* pendingAttempt(created.id, token)
        // The processor declined it; the process died before recording the decline.
        yield* Effect.flatMap(ChargeStore, (charges) =>
          charges.recordCharge({
            idempotencyKey: `${created.id}:1`,
            id: "ch_declined",
            amount: total,
            currency,
            outcome: "card_declined",
            createdAt: 0,
            authentication: undefined
          }))

        yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS)
        expect(yield* checkout.expireDue(50)).toBe(1)
        expect(yield* latestAttempt(created.id)).toEqual(Option.some([1, "declined"]))
        const payable = yield* get(`/checkout_sessions/${created.id}`)
        expect(payable.body.status).toBe("ready_for_payment")
        expect(payable.body.messages).toEqual([
          expect.objectContaining({ type: "error", code: "payment_declined", param: "$.payment_data" })
        ])
        const orders = yield* OrderStore
        expect(yield* orders.listEvents({ limit: 10 })).toEqual([])
      })))

    it.effect("past the session's expiry: not charged, expired with its stock back; charged, completed", () =>
      run(
        Effect.gen(function*() {
          const checkout = yield* CheckoutService
          const before = yield* onHand("print-limited")
          const { session: paying } = yield* crashedPayment
          const unpaid = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          yield* pendingAttempt(unpaid.id, yield* tokenize(unpaid.id))
          const idle = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          expect(yield* onHand("print-limited")).toBe(before)

          // No sweep ran before the sessions expired: the idle one expires in the batch, the
          // other two are settled after it.
          yield* TestClock.adjust(TTL_MILLIS + 1_000)
          expect(yield* checkout.expireDue(50)).toBe(3)
          const store = yield* CheckoutStore
          const statuses = yield* Effect.forEach([paying.id, unpaid.id, idle.id], (id) =>
            Effect.map(store.readSessionForPayment(id), Option.map((found) => found.session.status)))
          expect(statuses).toEqual([Option.some("completed"), Option.some("expired"), Option.some("expired")])
          expect(yield* latestAttempt(unpaid.id)).toEqual(Option.some([1, "declined"]))
          expect(yield* onHand("print-limited")).toBe(before! - 1)
          expect(yield* approvedCharges).toHaveLength(1)
        }),
        { crash: true }
      ))
  })
})
