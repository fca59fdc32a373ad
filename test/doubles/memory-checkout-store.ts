/**
 * In-memory `CheckoutStore`, for tests: tables of a `MemoryDatabase` (whose transactions it uses),
 * named like the SQL ones. Same semantics as the SQL store, including its errors: a duplicate
 * session id and stock going negative fail with `StorageError` "failure". The stock rules are
 * the domain's (`inventory.ts`); the completion writes the order with the memory order store's
 * own write, on the same database, so it is undone with the completion.
 */
import { Effect, Layer, Option } from "effect"
import { type Reservations, type Session, toCheckoutSession } from "../../src/checkout/session-model.ts"
import {
  CheckoutStore,
  type CheckoutStoreService,
  type InsertIfAvailable,
  type PaymentAttempt,
  type SessionForPayment,
  type StockLevel
} from "../../src/checkout/checkout-store.ts"
import { availableTo, heldByOthers, type HeldUnits, reservationsFit } from "../../src/checkout/inventory.ts"
import { isActive } from "../../src/checkout/session-model.ts"
import type { StorageError } from "../../src/db/storage-error.ts"
import { MemoryDatabase, storageFailure } from "./memory-database.ts"
import { saveOrderWithEvent } from "./memory-order-store.ts"

interface StoredSession {
  readonly session: Session
  /** 1 when inserted, +1 on every write. */
  readonly version: number
}

interface Reservation {
  readonly quantity: number
  /** Epoch ms. */
  readonly expiresAt: number
}

export const make: Effect.Effect<CheckoutStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const sessions = db.table<string, StoredSession>("checkout_sessions")
  const stock = db.table<string, number>("stock")
  /** Session id → product id → reservation. */
  const reservations = db.table<string, ReadonlyMap<string, Reservation>>("reservations")
  /** Session id → attempts in sequence order. */
  const attempts = db.table<string, ReadonlyArray<PaymentAttempt>>("payment_attempts")
  /** Coupon id → times redeemed. */
  const coupons = db.table<string, number>("coupons")
  /** Session id → coupon id → hold expiry (epoch ms). */
  const couponHolds = db.table<string, ReadonlyMap<string, number>>("coupon_holds")

  /** Stores a copy of `session` and moves its version on. */
  const putSession = (session: Session) =>
    sessions.set(session.id, { session: structuredClone(session), version: (sessions.get(session.id)?.version ?? 0) + 1 })

  const readSession = (id: string) => Option.map(Option.fromNullable(sessions.get(id)), (row) => structuredClone(row.session))

  /** The reservation rows of one product, across sessions. */
  const heldOf = function*(productId: string): Iterable<HeldUnits> {
    for (const [sessionId, rows] of reservations.entries()) {
      const row = rows.get(productId)
      if (row !== undefined) yield { sessionId, ...row }
    }
  }

  const available = (productIds: Iterable<string>, now: number, forSession: string) => {
    const units = new Map<string, number>()
    for (const productId of [...new Set(productIds)].sort()) {
      const onHand = stock.get(productId)
      if (onHand !== undefined) units.set(productId, availableTo(onHand, heldOf(productId), now, forSession))
    }
    return units as ReadonlyMap<string, number>
  }

  const getSession = (id: string) => db.sync(() => readSession(id))

  const getSessionJson = (id: string) =>
    db.sync(() =>
      Option.map(Option.fromNullable(sessions.get(id)), ({ session }) => ({
        status: session.status,
        expires_at: session.expires_at,
        json: JSON.stringify(toCheckoutSession(session))
      }))
    )

  const insertSession = (session: Session) =>
    db.atomic(() => {
      if (sessions.has(session.id)) return Effect.fail(storageFailure(`duplicate session id ${session.id}`))
      putSession(session)
      return Effect.void
    })

  const updateSession = (session: Session) =>
    db.atomic(() => {
      if (!sessions.has(session.id)) return Effect.fail(storageFailure(`updateSession: no session ${session.id}`))
      putSession(session)
      return Effect.void
    })

  const lockStock = (productIds: ReadonlyArray<string>, now: number, forSession: string) =>
    db.sync(() => available(productIds, now, forSession))

  /** Stores the session and moves its reservations' expiry (the caller checked it exists). */
  const keepingReservations = (session: Session, expiresAt: number) => {
    putSession(session)
    const rows = reservations.get(session.id)
    if (rows !== undefined) {
      reservations.set(session.id, new Map([...rows].map(([productId, row]) => [productId, { ...row, expiresAt }])))
    }
  }

  const updateSessionKeepingReservations = (session: Session, expiresAt: number) =>
    db.atomic(() => {
      if (!sessions.has(session.id)) return Effect.fail(storageFailure(`updateSession: no session ${session.id}`))
      keepingReservations(session, expiresAt)
      return Effect.void
    })

  const getSessionVersion = (id: string) =>
    db.sync(() =>
      Option.map(Option.fromNullable(sessions.get(id)), (row) => ({
        session: structuredClone(row.session),
        version: row.version
      }))
    )

  const updateSessionKeepingReservationsIfUnchanged = (session: Session, expiresAt: number, version: number) =>
    db.sync(() => {
      if (sessions.get(session.id)?.version !== version) return false
      keepingReservations(session, expiresAt)
      return true
    })

  const setReservations = (sessionId: string, wanted: Reservations, expiresAt: number) =>
    db.sync(() => {
      const rows = new Map<string, Reservation>()
      for (const [productId, quantity] of wanted) if (quantity > 0) rows.set(productId, { quantity, expiresAt })
      if (rows.size === 0) reservations.delete(sessionId)
      else reservations.set(sessionId, rows)
    })

  const insertSessionIfAvailable: CheckoutStoreService["insertSessionIfAvailable"] = (
    session,
    wanted,
    expiresAt,
    now
  ) =>
    db.atomic((): Effect.Effect<InsertIfAvailable, StorageError> => {
      const positive = new Map([...wanted].filter(([, units]) => units > 0))
      const seen = available(positive.keys(), now, session.id)
      if (!reservationsFit(positive, seen)) {
        return Effect.succeed({ inserted: false as const, available: seen })
      }
      return insertSession(session).pipe(
        Effect.zipRight(setReservations(session.id, wanted, expiresAt)),
        Effect.as({ inserted: true as const })
      )
    })

  const consumeReservations = (sessionId: string) =>
    db.atomic(() => {
      for (const [productId, { quantity }] of reservations.get(sessionId) ?? []) {
        const onHand = stock.get(productId)
        if (onHand === undefined) continue
        if (onHand - quantity < 0) return Effect.fail(storageFailure(`stock of ${productId} would become negative`))
        stock.set(productId, onHand - quantity)
      }
      reservations.delete(sessionId)
      return Effect.void
    })

  const releaseReservations = (sessionId: string) => db.sync(() => reservations.delete(sessionId))

  const findExpiredSessionIds = (now: number, limit: number) =>
    db.sync(() =>
      [...sessions.values()]
        .map((row) => row.session)
        .filter((session) => isActive(session.status) && Date.parse(session.expires_at) <= now)
        .sort((a, b) => Date.parse(a.expires_at) - Date.parse(b.expires_at))
        .slice(0, Math.max(0, Math.floor(limit)))
        .map((session) => session.id) as ReadonlyArray<string>
    )

  /** Rows for ids not stored yet (the first of each id), each value checked. */
  const seed = <A>(table: { has: (id: string) => boolean; set: (id: string, value: A) => void }, what: string) =>
  (rows: ReadonlyArray<readonly [string, A]>, valid: (value: A) => boolean) =>
    db.atomic(() => {
      const fresh = new Map<string, A>()
      for (const [id, value] of rows) if (!table.has(id) && !fresh.has(id)) fresh.set(id, value)
      if ([...fresh.values()].some((value) => !valid(value))) return Effect.fail(storageFailure(`${what}: invalid value`))
      for (const [id, value] of fresh) table.set(id, value)
      return Effect.void
    })

  const isCount = (n: number) => Number.isInteger(n) && n >= 0

  const seedStock = (products: ReadonlyArray<{ readonly id: string; readonly stock: number }>) =>
    seed(stock, "stock")(products.map((product) => [product.id, product.stock] as const), isCount)

  const stockLevels = (now: number) =>
    db.sync(() =>
      [...stock.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([productId, onHand]): StockLevel => ({
        productId,
        onHand,
        reserved: heldByOthers(heldOf(productId), now)
      }))
    )

  const writeAttempt = (attempt: PaymentAttempt, write: "insert" | "update") =>
    db.atomic(() => {
      const existing = attempts.get(attempt.sessionId) ?? []
      const found = existing.some((a) => a.sequence === attempt.sequence)
      if (write === "insert" && found) return Effect.fail(storageFailure(`duplicate payment attempt ${attempt.idempotencyKey}`))
      if (write === "update" && !found) return Effect.fail(storageFailure(`no payment attempt ${attempt.idempotencyKey}`))
      attempts.set(
        attempt.sessionId,
        write === "insert" ? [...existing, { ...attempt }] : existing.map((a) => (a.sequence === attempt.sequence ? { ...attempt } : a))
      )
      return Effect.void
    })

  const updatePaymentAttempt = (attempt: PaymentAttempt) => writeAttempt(attempt, "update")

  const lockSessionForPayment = (id: string) =>
    db.sync(() =>
      Option.map(readSession(id), (session): SessionForPayment => ({
        session,
        latestAttempt: Option.map(Option.fromNullable(attempts.get(id)?.at(-1)), (attempt) => ({ ...attempt })),
        couponHolds: [...(couponHolds.get(id)?.keys() ?? [])].sort()
      }))
    )

  const updateSessionAndAttempt: CheckoutStoreService["updateSessionAndAttempt"] = (session, attempt, write) =>
    db.atomic(() =>
      writeAttempt(attempt, write).pipe(
        Effect.zipRight(updateSession(session)),
        Effect.map(() => sessions.get(session.id)!.version)
      )
    )

  const redeemCoupons = (sessionId: string) =>
    db.sync(() => {
      for (const id of couponHolds.get(sessionId)?.keys() ?? []) coupons.set(id, (coupons.get(id) ?? 0) + 1)
      couponHolds.delete(sessionId)
    })

  const completePaidSessionIfUnchanged: CheckoutStoreService["completePaidSessionIfUnchanged"] = (completion) =>
    db.atomic(() => {
      const { session } = completion
      const attempt = attempts.get(session.id)?.find((a) => a.sequence === completion.attemptSequence)
      if (sessions.get(session.id)?.version !== completion.version || attempt?.state !== "pending") {
        return Effect.succeed(false)
      }
      return updatePaymentAttempt({ ...attempt, state: "succeeded", chargeId: completion.chargeId, updatedAt: completion.now })
        .pipe(
          Effect.zipRight(updateSession(session)),
          Effect.zipRight(saveOrderWithEvent(db, completion.order.stored, completion.order.event)),
          Effect.zipRight(redeemCoupons(session.id)),
          Effect.zipRight(consumeReservations(session.id)),
          Effect.as(true)
        )
    })

  const seedCoupons = (rows: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>) =>
    seed(coupons, "times_redeemed")(rows.map((coupon) => [coupon.id, coupon.timesRedeemed] as const), isCount)

  /** The holds of one coupon, across sessions: one unit each. */
  const holdsOf = function*(couponId: string): Iterable<HeldUnits> {
    for (const [sessionId, holds] of couponHolds.entries()) {
      const expiresAt = holds.get(couponId)
      if (expiresAt !== undefined) yield { sessionId, quantity: 1, expiresAt }
    }
  }

  const couponUsage = (couponIds: ReadonlyArray<string>, now: number, forSession: string, _lock: boolean) =>
    db.sync(() => {
      const usage = new Map<string, number>()
      for (const id of [...new Set(couponIds)].sort()) {
        const redeemed = coupons.get(id)
        if (redeemed !== undefined) usage.set(id, redeemed + heldByOthers(holdsOf(id), now, forSession))
      }
      return usage as ReadonlyMap<string, number>
    })

  const holdCoupons = (sessionId: string, couponIds: ReadonlyArray<string>, expiresAt: number) =>
    db.atomic(() => {
      const ids = [...new Set(couponIds)]
      const unknown = ids.find((id) => !coupons.has(id))
      if (unknown !== undefined) return Effect.fail(storageFailure(`no coupon ${unknown}`))
      if (ids.length === 0) couponHolds.delete(sessionId)
      else couponHolds.set(sessionId, new Map(ids.map((id) => [id, expiresAt])))
      return Effect.void
    })

  const releaseCouponHolds = (sessionId: string) => db.sync(() => couponHolds.delete(sessionId))

  const couponRedemptions = db.sync(() => new Map(coupons.entries()) as ReadonlyMap<string, number>)

  return CheckoutStore.of({
    seedCoupons,
    couponUsage,
    holdCoupons,
    redeemCoupons,
    releaseCouponHolds,
    couponRedemptions,
    lockSessionForPayment,
    updateSessionAndAttempt,
    completePaidSessionIfUnchanged,
    updatePaymentAttempt,
    transaction: db.transaction,
    getSession,
    getSessionJson,
    lockSession: getSession,
    insertSession,
    updateSession,
    insertSessionIfAvailable,
    updateSessionKeepingReservations,
    getSessionVersion,
    updateSessionKeepingReservationsIfUnchanged,
    lockStock,
    setReservations,
    consumeReservations,
    releaseReservations,
    findExpiredSessionIds,
    seedStock,
    stockLevels,
    ping: Effect.void
  })
})

/** The memory checkout store on the `MemoryDatabase` in context. */
export const MemoryCheckoutStore: Layer.Layer<CheckoutStore, never, MemoryDatabase> = Layer.effect(CheckoutStore, make)
