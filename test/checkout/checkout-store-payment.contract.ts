/**
 * The `CheckoutStore` contract: payment (attempts, the session read and locked for payment, the
 * attempt started with the session, the paid completion with its order, event and stock, and
 * what a rollback leaves). Part of `checkoutStoreContract` (`./checkout-store.contract.ts`).
 */
import type { Vitest } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { CheckoutStore, type PaidCompletion } from "../../src/checkout/checkout-store.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { claimLost } from "../../src/idempotency/idempotent-answer.ts"
import { makeOrderEvent } from "../../src/orders/model/order-event.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { claimedKey } from "../support/idempotency-claims.ts"
import {
  attemptOf,
  Boom,
  FAR_FUTURE,
  latestAttemptOf,
  levelsOf,
  makeSession,
  orderFor,
  uid,
  versionedSession
} from "./checkout-store-fixtures.ts"
import type { StoreUnderContract } from "./checkout-store.contract.ts"

export const paymentCases = (it: Vitest.MethodsNonLive<StoreUnderContract, true>) => {
  it.effect("payment attempts: latest by sequence, outcome updates; a missing one cannot be updated", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.none())
      const first = attemptOf(session.id, 1)
      yield* store.startPaymentAttempt(session, first)
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(first))
      const declined = { ...first, state: "declined" as const, updatedAt: 2_000 }
      yield* store.paymentAttempts.update(declined)
      const second = attemptOf(session.id, 2)
      yield* store.startPaymentAttempt(session, second)
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(second))
      const succeeded = { ...second, state: "succeeded" as const, chargeId: "ch_1", updatedAt: 4_000 }
      yield* store.paymentAttempts.update(succeeded)
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(succeeded))
      const missing = yield* Effect.flip(store.paymentAttempts.update({ ...first, sequence: 9 }))
      expect(missing).toBeInstanceOf(StorageError)
    }))

  it.effect("sessionsWithPaymentPendingSince: sessions of pending attempts made by then, oldest first", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      // Before every other case's attempts (made at 1970 + seconds): only these are that old.
      const base = Date.parse("1950-01-01T00:00:00.000Z")
      const made = (id: string, at: number, state: "pending" | "declined" = "pending") =>
        Effect.gen(function*() {
          const session = makeSession(id)
          yield* store.sessions.insert(session)
          yield* store.startPaymentAttempt(session, { ...attemptOf(id, 1), state, createdAt: at, updatedAt: at })
        })
      const [older, newer, settled, later] = [uid("cs_older"), uid("cs_newer"), uid("cs_settled"), uid("cs_later")]
      yield* made(newer, base + 1_000)
      yield* made(older, base)
      yield* made(settled, base + 500, "declined")
      yield* made(later, base + 5_000)
      expect(yield* store.sessionsWithPaymentPendingSince(base + 1_000, 10)).toEqual([older, newer])
      expect(yield* store.sessionsWithPaymentPendingSince(base + 1_000, 1)).toEqual([older])
      expect(yield* store.sessionsWithPaymentPendingSince(base + 1_000, 0)).toEqual([])
      yield* store.paymentAttempts.update({
        ...attemptOf(older, 1),
        state: "succeeded",
        chargeId: "ch_1",
        createdAt: base,
        updatedAt: base
      })
      expect(yield* store.sessionsWithPaymentPendingSince(base + 1_000, 10)).toEqual([newer])
    }))

  it.effect("lockSessionForPayment: the session with its version, latest attempt and coupon holds", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      expect(yield* store.transaction(store.lockSessionForPayment(uid("cs_missing")))).toEqual(Option.none())
      expect(yield* store.transaction(store.lockSessionForPayment(session.id))).toEqual(
        Option.some({ session, version: 1, latestAttempt: Option.none(), couponHolds: [] })
      )
      yield* store.startPaymentAttempt(session, attemptOf(session.id, 1))
      const second = { ...attemptOf(session.id, 2), amount: 2 ** 40 }
      const version = yield* store.startPaymentAttempt(session, second)
      const [couponA, couponB] = [uid("coupon_b"), uid("coupon_a")].sort()
      yield* store.coupons.seed([{ id: couponB!, timesRedeemed: 0 }, { id: couponA!, timesRedeemed: 3 }])
      yield* store.coupons.hold(session.id, [couponB!, couponA!], Date.parse(FAR_FUTURE))
      expect(yield* store.transaction(store.lockSessionForPayment(session.id))).toEqual(
        Option.some({ session, version, latestAttempt: Option.some(second), couponHolds: [couponA, couponB] })
      )
    }))

  it.effect("startPaymentAttempt writes the session and the attempt together, or neither", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      const paying = {
        ...session,
        status: "authentication_required" as const,
        updated_at: "2026-01-01T00:01:00.000Z"
      }
      const attempt = attemptOf(session.id, 1)
      yield* store.startPaymentAttempt(paying, attempt)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(paying))
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attempt))

      // A duplicate attempt, a session that does not exist: a StorageError and nothing written.
      const canceled = { ...paying, status: "canceled" as const }
      const duplicate = yield* Effect.flip(store.startPaymentAttempt(canceled, attempt))
      expect(duplicate).toBeInstanceOf(StorageError)
      const orphan = attemptOf(uid("cs_missing"), 1)
      const noSession = yield* Effect.flip(
        store.startPaymentAttempt(makeSession(orphan.sessionId), orphan)
      )
      expect(noSession).toBeInstanceOf(StorageError)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(paying))
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attempt))
      // Nothing was stored for the missing session: created now, it has no attempt.
      yield* store.sessions.insert(makeSession(orphan.sessionId))
      expect(yield* latestAttemptOf(orphan.sessionId)).toEqual(Option.none())
    }))

  it.effect("readSessionForPayment answers what lockSessionForPayment does, without a transaction", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      expect(yield* store.readSessionForPayment(uid("cs_missing"))).toEqual(Option.none())
      expect(yield* store.readSessionForPayment(session.id)).toEqual(
        Option.some({ session, version: 1, latestAttempt: Option.none(), couponHolds: [] })
      )
      const attempt = attemptOf(session.id, 1)
      const version = yield* store.startPaymentAttempt(session, attempt)
      const [coupon] = [uid("coupon")]
      yield* store.coupons.seed([{ id: coupon!, timesRedeemed: 0 }])
      yield* store.coupons.hold(session.id, [coupon!], Date.parse(FAR_FUTURE))
      const read = yield* store.readSessionForPayment(session.id)
      expect(read).toEqual(
        Option.some({ session, version, latestAttempt: Option.some(attempt), couponHolds: [coupon] })
      )
      expect(read).toEqual(yield* store.transaction(store.lockSessionForPayment(session.id)))
    }))

  it.effect("startPaymentAttemptAt writes the session and the attempt at the version read, else nothing", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      const paying = { ...session, updated_at: "2026-01-01T00:01:00.000Z" }
      const attempt = attemptOf(session.id, 1)
      // Read at version 1, written since: nothing is written, neither the session nor the attempt.
      const moved = yield* store.sessions.update({ ...session, status: "ready_for_payment" })
      expect(yield* store.startPaymentAttemptAt(paying, attempt, 1)).toEqual(Option.none())
      const unchanged = Option.getOrThrow(yield* versionedSession(store, session.id))
      expect(unchanged).toEqual({ session: { ...session, status: "ready_for_payment" }, version: moved })
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.none())
      // At the version it is at: both, and the new version.
      const written = Option.getOrThrow(yield* store.startPaymentAttemptAt(paying, attempt, moved))
      expect(yield* versionedSession(store, session.id)).toEqual(
        Option.some({ session: paying, version: written })
      )
      expect(written).toBeGreaterThan(moved)
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attempt))
      // A duplicate attempt fails and writes nothing; an absent session is none.
      const again = { ...paying, status: "canceled" as const }
      expect(yield* Effect.flip(store.startPaymentAttemptAt(again, attempt, written))).toBeInstanceOf(StorageError)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(paying))
      const orphan = attemptOf(uid("cs_missing"), 1)
      expect(yield* store.startPaymentAttemptAt(makeSession(orphan.sessionId), orphan, 1)).toEqual(Option.none())
    }))

  it.effect("completePaidCheckout: everything in one step at the version paid, nothing otherwise", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const orders = yield* OrderStore
      const p1 = uid("prod_a")
      const [kept, redeemed] = [uid("coupon_k"), uid("coupon_r")]
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
      yield* store.coupons.seed([{ id: kept, timesRedeemed: 0 }, { id: redeemed, timesRedeemed: 4 }])
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
      yield* store.coupons.hold(session.id, [redeemed], now + 60_000)
      const paying = { ...session, updated_at: "2026-01-30T12:00:01.000Z" }
      const version = yield* store.startPaymentAttempt(paying, attemptOf(session.id, 1))
      expect(Option.getOrThrow(yield* versionedSession(store, session.id)).version).toBe(version)

      const order = orderFor(session)
      const completed = { ...paying, status: "completed" as const, updated_at: "2026-01-30T12:00:02.000Z" }
      const completion = (overrides: Partial<PaidCompletion> = {}): PaidCompletion => ({
        session: completed,
        version,
        attemptSequence: 1,
        chargeId: "ch_paid",
        now: now + 2_000,
        order: {
          stored: { order, sessionId: session.id, createdAt: now + 2_000 },
          event: { id: uid("evt"), payload: makeOrderEvent("order_create", order), now: now + 2_000 }
        },
        ...overrides
      })
      const unchanged = Effect.gen(function*() {
        expect(yield* versionedSession(store, session.id)).toEqual(Option.some({ session: paying, version }))
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attemptOf(session.id, 1)))
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])
        const redemptions = yield* store.coupons.redemptions
        expect([redemptions.get(kept), redemptions.get(redeemed)]).toEqual([0, 4])
        expect(yield* orders.getOrder(order.id)).toEqual(Option.none())
      })

      // Not at the version paid, another attempt, another session: false and nothing written.
      expect(yield* store.completePaidCheckout(completion({ version: version - 1 }))).toBe(false)
      expect(yield* store.completePaidCheckout(completion({ attemptSequence: 2 }))).toBe(false)
      expect(
        yield* store.completePaidCheckout(completion({ session: { ...completed, id: uid("cs_missing") } }))
      ).toBe(false)
      yield* unchanged

      expect(yield* store.completePaidCheckout(completion())).toBe(true)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(completed))
      expect(Option.getOrThrow(yield* versionedSession(store, session.id)).version).toBeGreaterThan(version)
      expect(yield* latestAttemptOf(session.id)).toEqual(
        Option.some({ ...attemptOf(session.id, 1), state: "succeeded", chargeId: "ch_paid", updatedAt: now + 2_000 })
      )
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 7, reserved: 0 }])
      const redemptions = yield* store.coupons.redemptions
      expect([redemptions.get(kept), redemptions.get(redeemed)]).toEqual([0, 5])
      expect(Option.getOrThrow(yield* store.transaction(store.lockSessionForPayment(session.id))).couponHolds)
        .toEqual([])
      expect(yield* orders.getOrder(order.id)).toEqual(
        Option.some({ order, sessionId: session.id, createdAt: now + 2_000 })
      )
      const events = yield* orders.listEvents({ orderId: order.id, limit: 10 })
      expect(events.map((event) => [event.type, event.sequence, event.state])).toEqual([[
        "order_create",
        1,
        "pending"
      ]])
      expect(events[0]!.payload).toEqual(makeOrderEvent("order_create", order))

      // The same completion again (a concurrent twin): the version moved on, nothing doubled.
      expect(yield* store.completePaidCheckout(completion())).toBe(false)
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 7, reserved: 0 }])
      expect((yield* store.coupons.redemptions).get(redeemed)).toBe(5)
      expect(yield* orders.listEvents({ orderId: order.id, limit: 10 })).toHaveLength(1)
    }))

  /**
   * A session of 3 units of a product of 10 whose first attempt is pending at `version`, its
   * order, and the completion that pays it (`completion(overrides)`), completed at `now`.
   */
  const pendingCompletion = (now: number) =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const p1 = uid("prod_a")
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
      const version = yield* store.startPaymentAttempt(session, attemptOf(session.id, 1))
      const order = orderFor(session)
      const completed = { ...session, status: "completed" as const, updated_at: "2026-01-30T12:00:02.000Z" }
      const completion = (overrides: Partial<PaidCompletion> = {}): PaidCompletion => ({
        session: completed,
        version,
        attemptSequence: 1,
        chargeId: "ch_paid",
        now,
        order: {
          stored: { order, sessionId: session.id, createdAt: now },
          event: { id: uid("evt"), payload: makeOrderEvent("order_create", order), now }
        },
        ...overrides
      })
      return { p1, session, version, order, completed, completion }
    })

  it.effect("completePaidCheckout with an answer: both in one step; a lost claim or a stale version stores neither", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const orders = yield* OrderStore
      const keys = yield* IdempotencyStore
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      const { completed, completion, order, p1, session, version } = yield* pendingCompletion(now)
      const { answerOf, completed: answered, scope } = yield* claimedKey(now)
      const nothingWritten = Effect.gen(function*() {
        expect(yield* versionedSession(store, session.id)).toEqual(Option.some({ session, version }))
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attemptOf(session.id, 1)))
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])
        expect(yield* orders.getOrder(order.id)).toEqual(Option.none())
        expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))
      })

      // The claim is another request's now: the step fails and writes nothing.
      expect(yield* Effect.flip(store.completePaidCheckout(completion(), answerOf("claim_b")))).toBe(claimLost)
      yield* nothingWritten
      // Not at the version paid: nothing written, the answer not stored.
      expect(yield* store.completePaidCheckout(completion({ version: version - 1 }), answerOf("claim_a"))).toBe(false)
      yield* nothingWritten
      // Written: the completion and the answer.
      expect(yield* store.completePaidCheckout(completion(), answerOf("claim_a"))).toBe(true)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(completed))
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 7, reserved: 0 }])
      expect(Option.isSome(yield* orders.getOrder(order.id))).toBe(true)
      expect(yield* keys.find(scope, now)).toEqual(Option.some(answered))
    }))

  it.effect("a completion rolled back after its order was written leaves no order, no event, nothing consumed", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const orders = yield* OrderStore
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      const { completion, order, p1, session, version } = yield* pendingCompletion(now)
      const failed = yield* Effect.flip(store.transaction(Effect.gen(function*() {
        const written = yield* store.completePaidCheckout(completion({ chargeId: "ch_rolled_back" }))
        expect(written).toBe(true)
        expect(Option.isSome(yield* orders.getOrder(order.id))).toBe(true)
        return yield* Effect.fail(new Boom())
      })))
      expect(failed).toBeInstanceOf(Boom)
      expect(yield* orders.getOrder(order.id)).toEqual(Option.none())
      expect(yield* orders.listEvents({ orderId: order.id, limit: 10 })).toEqual([])
      expect(yield* versionedSession(store, session.id)).toEqual(Option.some({ session, version }))
      expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attemptOf(session.id, 1)))
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])
    }))

  it.effect("lockSessionForPayment waits for the lock and then sees what its holder committed", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      const attempt = attemptOf(session.id, 1)
      const locked = yield* Effect.makeLatch(false)
      const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
        yield* store.lockSessionForPayment(session.id)
        yield* locked.open
        yield* Effect.sleep("100 millis")
        yield* store.startPaymentAttempt(session, attempt)
      })))
      yield* locked.await
      const seen = yield* store.transaction(store.lockSessionForPayment(session.id))
      yield* Fiber.join(holder)
      expect(Option.getOrThrow(seen).latestAttempt).toEqual(Option.some(attempt))
    }))
}
