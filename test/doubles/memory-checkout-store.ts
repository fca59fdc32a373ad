/**
 * In-memory `CheckoutStore`, for tests: tables of a `MemoryDatabase` (whose transactions it uses),
 * named like the SQL ones. Same semantics as the SQL store, including its errors: a duplicate
 * session id and stock going negative fail with `StorageError` "failure". The rules are the
 * domain's (`inventory.ts`, the statuses the sweep is given); the completion writes the order
 * with the memory order store's own write, on the same database, so it is undone with the
 * completion.
 */
import { Effect, Layer, Option } from "effect"
import {
  CheckoutStore,
  type CheckoutStoreService,
  type CouponStore,
  type InventoryStore,
  type SessionForPayment,
  type SessionStore,
  type StockLevel,
  type VersionedSession
} from "../../src/checkout/checkout-store.ts"
import { type PaymentAttempt } from "../../src/checkout/payment/attempt.ts"
import { availableTo, heldByOthers, type HeldUnits, reservationsFit } from "../../src/checkout/session/inventory.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { toCheckoutSession } from "../../src/checkout/session/session.ts"
import { holdsUntil } from "../../src/checkout/session/view.ts"
import { makeWrittenSessions } from "../../src/checkout/written-sessions.ts"
import { MemoryDatabase, type MemoryTable, storageFailure, storeAnswer } from "./memory-database.ts"
import { saveOrderWithEvent } from "./memory-order-store.ts"

interface Reservation {
  readonly quantity: number
  /** Epoch ms. */
  readonly expiresAt: number
}

const byKey = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0)

/** Seeds `rows` whose id `table` does not have yet (the first of each id), every value checked. */
const seedRows = <A>(
  table: MemoryTable<string, A>,
  rows: ReadonlyArray<readonly [string, A]>,
  valid: (value: A) => boolean
) => {
  const fresh = new Map<string, A>()
  for (const [id, value] of rows) if (!table.has(id) && !fresh.has(id)) fresh.set(id, value)
  if ([...fresh.values()].some((value) => !valid(value))) return Effect.fail(storageFailure("seed: invalid value"))
  for (const [id, value] of fresh) table.set(id, value)
  return Effect.void
}

const isCount = (n: number) => Number.isInteger(n) && n >= 0

export const make: Effect.Effect<CheckoutStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  /** Session id → the session and its version (1 when inserted, +1 on every write). */
  const sessionRows = db.table<string, VersionedSession>("checkout_sessions")
  const stock = db.table<string, number>("stock")
  /** Session id → product id → reservation. */
  const reservations = db.table<string, ReadonlyMap<string, Reservation>>("reservations")
  /** Session id → attempts in sequence order. */
  const attempts = db.table<string, ReadonlyArray<PaymentAttempt>>("payment_attempts")
  /** Coupon id → times redeemed. */
  const couponCounts = db.table<string, number>("coupons")
  /** Session id → coupon id → hold expiry (epoch ms). */
  const couponHolds = db.table<string, ReadonlyMap<string, number>>("coupon_holds")

  const copyOf = (row: VersionedSession): VersionedSession => ({
    session: structuredClone(row.session),
    version: row.version
  })
  const versioned = (id: string) => Option.map(Option.fromNullable(sessionRows.get(id)), copyOf)

  const sessionForPayment = (id: string) =>
    Option.map(versioned(id), (row): SessionForPayment => ({
      ...row,
      latestAttempt: Option.map(Option.fromNullable(attempts.get(id)?.at(-1)), (attempt) => ({ ...attempt })),
      couponHolds: [...(couponHolds.get(id)?.keys() ?? [])].sort()
    }))

  /** Stores a copy of `session`, its version moved on; answers the version. */
  const putSession = (session: Session) => {
    const version = (sessionRows.get(session.id)?.version ?? 0) + 1
    sessionRows.set(session.id, { session: structuredClone(session), version })
    return version
  }

  const sessions: SessionStore = {
    get: (id) => db.sync(() => Option.map(versioned(id), (row) => row.session)),
    getJson: (id) =>
      db.sync(() =>
        Option.map(Option.fromNullable(sessionRows.get(id)), ({ session }) => ({
          status: session.status,
          expires_at: session.expires_at,
          json: JSON.stringify(toCheckoutSession(session))
        }))
      ),
    // A Map iterates in insertion order, and a write of an existing session keeps its place.
    list: (filter) =>
      db.sync(() =>
        [...sessionRows.values()]
          .reverse()
          .filter((row) => filter.status === undefined || row.session.status === filter.status)
          .slice(0, Math.max(0, Math.floor(filter.limit)))
          .map((row) => structuredClone(row.session))
      ),
    lock: (id) => db.sync(() => versioned(id)),
    insert: (session) =>
      db.atomic(() =>
        sessionRows.has(session.id)
          ? Effect.fail(storageFailure(`duplicate session id ${session.id}`))
          : Effect.as(Effect.sync(() => putSession(session)), undefined)
      ),
    update: (session) =>
      db.atomic(() =>
        sessionRows.has(session.id)
          ? Effect.sync(() => putSession(session))
          : Effect.fail(storageFailure(`updateSession: no session ${session.id}`))
      )
  }

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

  const setReservations = (sessionId: string, wanted: ReadonlyMap<string, number>, expiresAt: number) => {
    const rows = new Map<string, Reservation>()
    for (const [productId, quantity] of wanted) if (quantity > 0) rows.set(productId, { quantity, expiresAt })
    if (rows.size === 0) reservations.delete(sessionId)
    else reservations.set(sessionId, rows)
  }

  const inventory: InventoryStore = {
    seedStock: (products) =>
      db.atomic(() => seedRows(stock, products.map((product) => [product.id, product.stock] as const), isCount)),
    stockLevels: (now) =>
      db.sync(() =>
        [...stock.entries()].sort(byKey).map(([productId, onHand]): StockLevel => ({
          productId,
          onHand,
          reserved: heldByOthers(heldOf(productId), now)
        }))
      ),
    lockStock: (productIds, now, forSession) => db.sync(() => available(productIds, now, forSession)),
    setReservations: (sessionId, wanted, expiresAt) => db.sync(() => setReservations(sessionId, wanted, expiresAt)),
    consumeReservations: (sessionId) =>
      db.atomic(() => {
        for (const [productId, { quantity }] of reservations.get(sessionId) ?? []) {
          const onHand = stock.get(productId)
          if (onHand === undefined) continue
          if (onHand - quantity < 0) return Effect.fail(storageFailure(`stock of ${productId} would become negative`))
          stock.set(productId, onHand - quantity)
        }
        reservations.delete(sessionId)
        return Effect.void
      }),
    releaseReservations: (sessionId) => db.sync(() => reservations.delete(sessionId))
  }

  /** The holds of one coupon, across sessions: one unit each. */
  const holdsOf = function*(couponId: string): Iterable<HeldUnits> {
    for (const [sessionId, holds] of couponHolds.entries()) {
      const expiresAt = holds.get(couponId)
      if (expiresAt !== undefined) yield { sessionId, quantity: 1, expiresAt }
    }
  }

  const coupons: CouponStore = {
    seed: (rows) =>
      db.atomic(() =>
        seedRows(couponCounts, rows.map((coupon) => [coupon.id, coupon.timesRedeemed] as const), isCount)
      ),
    usage: (couponIds, now, forSession) =>
      db.sync(() => {
        const usage = new Map<string, number>()
        for (const id of [...new Set(couponIds)].sort()) {
          const redeemed = couponCounts.get(id)
          if (redeemed !== undefined) usage.set(id, redeemed + heldByOthers(holdsOf(id), now, forSession))
        }
        return usage as ReadonlyMap<string, number>
      }),
    hold: (sessionId, couponIds, expiresAt) =>
      db.atomic(() => {
        const ids = [...new Set(couponIds)]
        const unknown = ids.find((id) => !couponCounts.has(id))
        if (unknown !== undefined) return Effect.fail(storageFailure(`no coupon ${unknown}`))
        if (ids.length === 0) couponHolds.delete(sessionId)
        else couponHolds.set(sessionId, new Map(ids.map((id) => [id, expiresAt])))
        return Effect.void
      }),
    releaseHolds: (sessionId) => db.sync(() => couponHolds.delete(sessionId)),
    redemptions: db.sync(() => new Map(couponCounts.entries()) as ReadonlyMap<string, number>)
  }

  const writeAttempt = (attempt: PaymentAttempt, write: "insert" | "update") =>
    db.atomic(() => {
      const existing = attempts.get(attempt.sessionId) ?? []
      const found = existing.some((a) => a.sequence === attempt.sequence)
      if (write === "insert" && found) return Effect.fail(storageFailure(`duplicate attempt ${attempt.idempotencyKey}`))
      if (write === "update" && !found) {
        return Effect.fail(storageFailure(`no payment attempt ${attempt.idempotencyKey}`))
      }
      attempts.set(
        attempt.sessionId,
        write === "insert"
          ? [...existing, { ...attempt }]
          : existing.map((a) => (a.sequence === attempt.sequence ? { ...attempt } : a))
      )
      return Effect.void
    })

  return CheckoutStore.of({
    written: makeWrittenSessions(),
    transaction: db.transaction,
    ping: Effect.void,
    sessions,
    inventory,
    paymentAttempts: { update: (attempt) => writeAttempt(attempt, "update") },
    coupons,
    createSessionReservingStock: ({ reservations: wanted, session }, now, answer) =>
      db.atomic(() => {
        if (!reservationsFit(wanted, available(wanted.keys(), now, session.id))) return Effect.succeed(false)
        return sessions.insert(session).pipe(
          Effect.zipRight(Effect.sync(() => setReservations(session.id, wanted, holdsUntil(session)))),
          Effect.zipRight(storeAnswer(answer)),
          Effect.as(true)
        )
      }),
    updateSessionKeepingItems: (session, version, answer) =>
      db.atomic(() => {
        if (sessionRows.get(session.id)?.version !== version) return Effect.succeed(false)
        putSession(session)
        const rows = reservations.get(session.id)
        if (rows !== undefined) {
          setReservations(session.id, new Map([...rows].map(([id, row]) => [id, row.quantity])), holdsUntil(session))
        }
        return Effect.as(storeAnswer(answer), true)
      }),
    updateSessionAndReservations: ({ reservations: wanted, session }) =>
      Effect.zipRight(
        sessions.update(session),
        Effect.sync(() => setReservations(session.id, wanted, holdsUntil(session)))
      ),
    lockExpiredSessions: (statuses, now, limit) =>
      db.sync(() =>
        [...sessionRows.values()]
          .map((row) => row.session)
          .filter((session) => statuses.includes(session.status) && Date.parse(session.expires_at) <= now)
          .sort((a, b) => Date.parse(a.expires_at) - Date.parse(b.expires_at))
          .slice(0, Math.max(0, Math.floor(limit)))
          .map((session) => session.id)
      ),
    sessionsWithPaymentPendingSince: (before, limit) =>
      db.sync(() =>
        [...attempts.values()]
          .flat()
          .filter((attempt) => attempt.state === "pending" && attempt.createdAt <= before)
          .sort((a, b) => a.createdAt - b.createdAt)
          .slice(0, Math.max(0, Math.floor(limit)))
          .map((attempt) => attempt.sessionId)
      ),
    lockSessionForPayment: (id) => db.sync(() => sessionForPayment(id)),
    readSessionForPayment: (id) => db.sync(() => sessionForPayment(id)),
    startPaymentAttempt: (session, attempt) =>
      db.atomic(() =>
        sessionRows.has(session.id)
          ? Effect.zipRight(writeAttempt(attempt, "insert"), sessions.update(session))
          : Effect.fail(storageFailure(`startPaymentAttempt: no session ${session.id}`))
      ),
    startPaymentAttemptAt: (session, attempt, version) =>
      db.atomic(() =>
        sessionRows.get(session.id)?.version === version
          ? Effect.map(Effect.zipRight(writeAttempt(attempt, "insert"), sessions.update(session)), Option.some)
          : Effect.succeed(Option.none())
      ),
    completePaidCheckout: (completion, answer) =>
      db.atomic(() => {
        const { session } = completion
        const attempt = attempts.get(session.id)?.find((a) => a.sequence === completion.attemptSequence)
        if (sessionRows.get(session.id)?.version !== completion.version || attempt?.state !== "pending") {
          return Effect.succeed(false)
        }
        const succeeded = {
          ...attempt,
          state: "succeeded" as const,
          chargeId: completion.chargeId,
          updatedAt: completion.now
        }
        return writeAttempt(succeeded, "update").pipe(
          Effect.zipRight(sessions.update(session)),
          Effect.zipRight(saveOrderWithEvent(db, completion.order.stored, completion.order.event)),
          Effect.zipRight(Effect.sync(() => {
            for (const id of couponHolds.get(session.id)?.keys() ?? []) {
              couponCounts.set(id, (couponCounts.get(id) ?? 0) + 1)
            }
            couponHolds.delete(session.id)
          })),
          Effect.zipRight(inventory.consumeReservations(session.id)),
          Effect.zipRight(storeAnswer(answer)),
          Effect.as(true)
        )
      })
  })
})

/** The memory checkout store on the `MemoryDatabase` in context. */
export const MemoryCheckoutStore: Layer.Layer<CheckoutStore, never, MemoryDatabase> = Layer.effect(CheckoutStore, make)
