/**
 * In-memory `CheckoutStore`, for tests and for running without a database.
 *
 * - One critical section: a `Semaphore(1)` is held for the whole of each outermost `transaction`,
 *   and for each plain call made outside a transaction (so such a call is atomic and never sees a
 *   transaction's uncommitted writes).
 * - Re-entrant: a `FiberRef` (one per store) marks the fibers running inside a transaction; nested
 *   `transaction` calls and plain calls made there (also from fibers forked there) run directly.
 * - Rollback: the state is copy-on-write. Each `transaction` (outermost or nested) remembers the
 *   current state and marks it shared; the first write after that copies the maps. On failure or
 *   interruption the remembered state is put back. Nested calls behave like SQL savepoints: a
 *   failing inner call undoes only its own writes, and the outer failure undoes everything.
 * - Values are deep-copied (`structuredClone`) on the way in and out.
 *
 * Same semantics as the SQL store, including its errors: a duplicate session id and stock going
 * negative fail with `StorageError` "failure". `completePaidSessionIfUnchanged` writes the order
 * and its event through the `OrderStore` in context, last: that write is not undone if the
 * transaction around it fails later (the two memory stores have separate state).
 */
import { Effect, Exit, FiberRef, Layer, Option } from "effect"
import { OrderStore } from "../../src/orders/order-store.ts"
import { type Reservations, type Session, toCheckoutSession } from "../../src/checkout/session-model.ts"
import { CheckoutStore, type CheckoutStoreService, type InsertIfAvailable, type PaymentAttempt, type SessionForPayment, type StockLevel } from "../../src/checkout/checkout-store.ts"
import { StorageError } from "../../src/db/storage-error.ts"

interface Reservation {
  readonly quantity: number
  /** Epoch ms. */
  readonly expiresAt: number
}

interface State {
  readonly sessions: Map<string, Session>
  /** Session id → version: 1 when inserted, +1 on every write. */
  readonly versions: Map<string, number>
  readonly stock: Map<string, number>
  /** Session id → product id → reservation. Inner maps are replaced, never mutated. */
  readonly reservations: Map<string, ReadonlyMap<string, Reservation>>
  /** Session id → attempts in sequence order. Arrays are replaced, never mutated. */
  readonly attempts: Map<string, ReadonlyArray<PaymentAttempt>>
  /** Coupon id → times redeemed. */
  readonly coupons: Map<string, number>
  /** Session id → coupon id → hold expiry (epoch ms). Inner maps are replaced, never mutated. */
  readonly couponHolds: Map<string, ReadonlyMap<string, number>>
}

const emptyState = (): State => ({
  sessions: new Map(),
  versions: new Map(),
  stock: new Map(),
  reservations: new Map(),
  attempts: new Map(),
  coupons: new Map(),
  couponHolds: new Map()
})

const copyState = (state: State): State => ({
  sessions: new Map(state.sessions),
  versions: new Map(state.versions),
  stock: new Map(state.stock),
  reservations: new Map(state.reservations),
  attempts: new Map(state.attempts),
  coupons: new Map(state.coupons),
  couponHolds: new Map(state.couponHolds)
})

/** Stores a copy of `session` and moves its version on. */
const putSession = (s: State, session: Session) => {
  s.sessions.set(session.id, structuredClone(session))
  s.versions.set(session.id, (s.versions.get(session.id) ?? 0) + 1)
}

const failure = (message: string) => new StorageError({ reason: "failure", cause: new Error(message) })

const isActiveStatus = (status: Session["status"]) =>
  status === "not_ready_for_payment" || status === "ready_for_payment" || status === "authentication_required"

export const make: Effect.Effect<CheckoutStoreService, never, OrderStore> = Effect.map(OrderStore, (orders) => {
  let state = emptyState()
  /** Whether `state` is referenced by a transaction's snapshot (then the next write copies it). */
  let shared = false

  const semaphore = Effect.unsafeMakeSemaphore(1)
  const inTransaction = FiberRef.unsafeMake(false)

  const writable = (): State => {
    if (shared) {
      state = copyState(state)
      shared = false
    }
    return state
  }

  /** Runs `f` atomically: directly inside a transaction, else under the lock. */
  const atomic = <A>(f: () => Effect.Effect<A, StorageError>): Effect.Effect<A, StorageError> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) =>
      inside ? Effect.suspend(f) : semaphore.withPermits(1)(Effect.suspend(f)))

  const read = <A>(f: (s: State) => A): Effect.Effect<A, StorageError> => atomic(() => Effect.sync(() => f(state)))

  /** Runs `effect`; undoes its writes when it does not succeed. */
  const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const saved = state
        shared = true
        return restore(effect).pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : Effect.sync(() => {
                state = saved
                shared = true
              })
          )
        )
      })
    )

  const transaction: CheckoutStoreService["transaction"] = (effect) =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) =>
      inside
        ? savepoint(effect)
        : semaphore.withPermits(1)(Effect.locally(savepoint(effect), inTransaction, true)))

  const getSession = (id: string) =>
    read((s) => Option.map(Option.fromNullable(s.sessions.get(id)), (session) => structuredClone(session)))

  const getSessionJson = (id: string) =>
    read((s) =>
      Option.map(Option.fromNullable(s.sessions.get(id)), (session) => ({
        status: session.status,
        expires_at: session.expires_at,
        json: JSON.stringify(toCheckoutSession(session))
      }))
    )

  const insertSession = (session: Session) =>
    atomic(() => {
      if (state.sessions.has(session.id)) return Effect.fail(failure(`duplicate session id ${session.id}`))
      putSession(writable(), session)
      return Effect.void
    })

  const updateSession = (session: Session) =>
    atomic(() => {
      if (!state.sessions.has(session.id)) return Effect.fail(failure(`updateSession: no session ${session.id}`))
      putSession(writable(), session)
      return Effect.void
    })

  const liveHeldByOthers = (s: State, productId: string, now: number, forSession: string | undefined) => {
    let held = 0
    for (const [sessionId, reservations] of s.reservations) {
      if (sessionId === forSession) continue
      const reservation = reservations.get(productId)
      if (reservation !== undefined && reservation.expiresAt > now) held += reservation.quantity
    }
    return held
  }

  const lockStock = (productIds: ReadonlyArray<string>, now: number, forSession: string) =>
    read((s) => {
      const available = new Map<string, number>()
      for (const productId of [...new Set(productIds)].sort()) {
        const onHand = s.stock.get(productId)
        if (onHand !== undefined) available.set(productId, onHand - liveHeldByOthers(s, productId, now, forSession))
      }
      return available as ReadonlyMap<string, number>
    })

  /** Stores the session and moves its reservations' expiry (the caller checked it exists). */
  const keepingReservations = (session: Session, expiresAt: number) => {
    const s = writable()
    putSession(s, session)
    const reservations = s.reservations.get(session.id)
    if (reservations !== undefined) {
      s.reservations.set(
        session.id,
        new Map([...reservations].map(([productId, reservation]) => [productId, { ...reservation, expiresAt }]))
      )
    }
  }

  const updateSessionKeepingReservations = (session: Session, expiresAt: number) =>
    atomic(() => {
      if (!state.sessions.has(session.id)) return Effect.fail(failure(`updateSession: no session ${session.id}`))
      keepingReservations(session, expiresAt)
      return Effect.void
    })

  const getSessionVersion = (id: string) =>
    read((s) =>
      Option.map(Option.fromNullable(s.sessions.get(id)), (session) => ({
        session: structuredClone(session),
        version: s.versions.get(id) ?? 0
      }))
    )

  const updateSessionKeepingReservationsIfUnchanged = (session: Session, expiresAt: number, version: number) =>
    atomic(() =>
      Effect.sync(() => {
        if (!state.sessions.has(session.id) || state.versions.get(session.id) !== version) return false
        keepingReservations(session, expiresAt)
        return true
      })
    )

  const insertSessionIfAvailable: CheckoutStoreService["insertSessionIfAvailable"] = (
    session,
    reservations,
    expiresAt,
    now
  ) =>
    transaction(
      Effect.flatMap(lockStock([...reservations.keys()], now, session.id), (available): Effect.Effect<
        InsertIfAvailable,
        StorageError
      > => {
        const fits = [...reservations].every(([productId, quantity]) =>
          quantity <= 0 || quantity <= (available.get(productId) ?? Number.NEGATIVE_INFINITY)
        )
        if (!fits) return Effect.succeed({ inserted: false, available })
        return insertSession(session).pipe(
          Effect.zipRight(setReservations(session.id, reservations, expiresAt)),
          Effect.as({ inserted: true })
        )
      })
    )

  const setReservations = (sessionId: string, reservations: Reservations, expiresAt: number) =>
    atomic(() =>
      Effect.sync(() => {
        const entries = new Map<string, Reservation>()
        for (const [productId, quantity] of reservations) {
          if (quantity > 0) entries.set(productId, { quantity, expiresAt })
        }
        const s = writable()
        if (entries.size === 0) s.reservations.delete(sessionId)
        else s.reservations.set(sessionId, entries)
      })
    )

  const consumeReservations = (sessionId: string) =>
    atomic(() => {
      const reservations = state.reservations.get(sessionId)
      if (reservations === undefined) return Effect.void
      const updates: Array<readonly [string, number]> = []
      for (const [productId, { quantity }] of reservations) {
        const onHand = state.stock.get(productId)
        if (onHand === undefined) continue
        if (onHand - quantity < 0) return Effect.fail(failure(`stock of ${productId} would become negative`))
        updates.push([productId, onHand - quantity])
      }
      const s = writable()
      for (const [productId, onHand] of updates) s.stock.set(productId, onHand)
      s.reservations.delete(sessionId)
      return Effect.void
    })

  const releaseReservations = (sessionId: string) =>
    atomic(() =>
      Effect.sync(() => {
        if (state.reservations.has(sessionId)) writable().reservations.delete(sessionId)
      })
    )

  const findExpiredSessionIds = (now: number, limit: number) =>
    read((s) =>
      [...s.sessions.values()]
        .filter((session) => isActiveStatus(session.status) && Date.parse(session.expires_at) <= now)
        .sort((a, b) => Date.parse(a.expires_at) - Date.parse(b.expires_at))
        .slice(0, Math.max(0, Math.floor(limit)))
        .map((session) => session.id) as ReadonlyArray<string>
    )

  const seedStock = (products: ReadonlyArray<{ readonly id: string; readonly stock: number }>) =>
    atomic(() => {
      const fresh = products.filter((product, index) =>
        !state.stock.has(product.id) && products.findIndex((p) => p.id === product.id) === index
      )
      if (fresh.some((product) => !Number.isInteger(product.stock) || product.stock < 0)) {
        return Effect.fail(failure("stock must be a non-negative integer"))
      }
      if (fresh.length > 0) {
        const s = writable()
        for (const product of fresh) s.stock.set(product.id, product.stock)
      }
      return Effect.void
    })

  const stockLevels = (now: number) =>
    read((s) =>
      [...s.stock.keys()].sort().map((productId): StockLevel => ({
        productId,
        onHand: s.stock.get(productId) ?? 0,
        reserved: liveHeldByOthers(s, productId, now, undefined)
      }))
    )

  const insertPaymentAttempt = (attempt: PaymentAttempt) =>
    atomic(() => {
      const existing = state.attempts.get(attempt.sessionId) ?? []
      if (existing.some((a) => a.sequence === attempt.sequence)) {
        return Effect.fail(failure(`duplicate payment attempt ${attempt.idempotencyKey}`))
      }
      writable().attempts.set(attempt.sessionId, [...existing, { ...attempt }])
      return Effect.void
    })

  const updatePaymentAttempt = (attempt: PaymentAttempt) =>
    atomic(() => {
      const existing = state.attempts.get(attempt.sessionId) ?? []
      if (!existing.some((a) => a.sequence === attempt.sequence)) {
        return Effect.fail(failure(`no payment attempt ${attempt.idempotencyKey}`))
      }
      writable().attempts.set(
        attempt.sessionId,
        existing.map((a) => (a.sequence === attempt.sequence ? { ...attempt } : a))
      )
      return Effect.void
    })

  const lockSessionForPayment = (id: string) =>
    read((s) =>
      Option.map(Option.fromNullable(s.sessions.get(id)), (session): SessionForPayment => ({
        session: structuredClone(session),
        latestAttempt: Option.map(Option.fromNullable(s.attempts.get(id)?.at(-1)), (attempt) => ({ ...attempt })),
        couponHolds: [...(s.couponHolds.get(id)?.keys() ?? [])].sort()
      }))
    )

  const updateSessionAndAttempt: CheckoutStoreService["updateSessionAndAttempt"] = (session, attempt, write) =>
    transaction(Effect.zipRight(
      write === "insert" ? insertPaymentAttempt(attempt) : updatePaymentAttempt(attempt),
      Effect.zipRight(updateSession(session), Effect.sync(() => state.versions.get(session.id) ?? 0))
    ))

  const completePaidSessionIfUnchanged: CheckoutStoreService["completePaidSessionIfUnchanged"] = (completion) =>
    transaction(Effect.suspend(() => {
      const { session } = completion
      const attempt = state.attempts.get(session.id)?.find((a) => a.sequence === completion.attemptSequence)
      if (state.versions.get(session.id) !== completion.version || attempt?.state !== "pending") {
        return Effect.succeed(false)
      }
      return updatePaymentAttempt({ ...attempt, state: "succeeded", chargeId: completion.chargeId, updatedAt: completion.now })
        .pipe(
          Effect.zipRight(updateSession(session)),
          Effect.zipRight(redeemCoupons(session.id)),
          Effect.zipRight(consumeReservations(session.id)),
          Effect.zipRight(orders.saveOrderWithEvent(completion.order.stored, completion.order.event)),
          Effect.as(true)
        )
    }))

  const seedCoupons = (coupons: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>) =>
    atomic(() => {
      const fresh = coupons.filter((c, index) => !state.coupons.has(c.id) && coupons.findIndex((x) => x.id === c.id) === index)
      if (fresh.some((c) => !Number.isInteger(c.timesRedeemed) || c.timesRedeemed < 0)) {
        return Effect.fail(failure("times_redeemed must be a non-negative integer"))
      }
      if (fresh.length > 0) {
        const s = writable()
        for (const c of fresh) s.coupons.set(c.id, c.timesRedeemed)
      }
      return Effect.void
    })

  const couponUsage = (couponIds: ReadonlyArray<string>, now: number, forSession: string, _lock: boolean) =>
    read((s) => {
      const usage = new Map<string, number>()
      for (const id of [...new Set(couponIds)].sort()) {
        const redeemed = s.coupons.get(id)
        if (redeemed === undefined) continue
        let held = 0
        for (const [sessionId, holds] of s.couponHolds) {
          const expiresAt = holds.get(id)
          if (sessionId !== forSession && expiresAt !== undefined && expiresAt > now) held++
        }
        usage.set(id, redeemed + held)
      }
      return usage as ReadonlyMap<string, number>
    })

  const holdCoupons = (sessionId: string, couponIds: ReadonlyArray<string>, expiresAt: number) =>
    atomic(() => {
      const ids = [...new Set(couponIds)]
      const unknown = ids.find((id) => !state.coupons.has(id))
      if (unknown !== undefined) return Effect.fail(failure(`no coupon ${unknown}`))
      const s = writable()
      if (ids.length === 0) s.couponHolds.delete(sessionId)
      else s.couponHolds.set(sessionId, new Map(ids.map((id) => [id, expiresAt])))
      return Effect.void
    })

  const redeemCoupons = (sessionId: string) =>
    atomic(() =>
      Effect.sync(() => {
        const holds = state.couponHolds.get(sessionId)
        if (holds === undefined) return
        const s = writable()
        for (const id of holds.keys()) s.coupons.set(id, (s.coupons.get(id) ?? 0) + 1)
        s.couponHolds.delete(sessionId)
      })
    )

  const releaseCouponHolds = (sessionId: string) =>
    atomic(() =>
      Effect.sync(() => {
        if (state.couponHolds.has(sessionId)) writable().couponHolds.delete(sessionId)
      })
    )

  const couponRedemptions = read((s) => new Map(s.coupons) as ReadonlyMap<string, number>)

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
    transaction,
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

/** A fresh, empty in-memory store; completions write orders to the `OrderStore` in context. */
export const MemoryCheckoutStore: Layer.Layer<CheckoutStore, never, OrderStore> = Layer.effect(CheckoutStore, make)
