/**
 * The `CheckoutStore` contract: stock and reservations (locking stock, creating and updating
 * sessions with their reservations, consuming and releasing them, seeding, stock levels). Part of
 * `checkoutStoreContract` (`./checkout-store.contract.ts`).
 */
import type { Vitest } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { Chunk, Effect, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { claimLost } from "../../src/idempotency/idempotent-answer.ts"
import { claimedKey } from "../support/idempotency-claims.ts"
import { attemptOf, iso, levelsOf, makeSession, uid, versionedSession } from "./checkout-store-fixtures.ts"
import type { StoreUnderContract } from "./checkout-store.contract.ts"

export const stockCases = (it: Vitest.MethodsNonLive<StoreUnderContract, true>) => {
  it.effect("lockStock: others' live reservations count, own and expired ones do not", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [p1, p2, unknown] = [uid("prod_a"), uid("prod_b"), uid("prod_unknown")]
      const [own, other, expired, boundary] = [uid("cs"), uid("cs"), uid("cs"), uid("cs")]
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 5 }])
      yield* store.inventory.setReservations(own, new Map([[p1, 3]]), now + 60_000)
      yield* store.inventory.setReservations(other, new Map([[p1, 2], [p2, 1]]), now + 60_000)
      yield* store.inventory.setReservations(expired, new Map([[p1, 4]]), now - 1)
      yield* store.inventory.setReservations(boundary, new Map([[p2, 2]]), now) // expires exactly now: not live

      const available = yield* store.transaction(store.inventory.lockStock([p2, p1, unknown, p1], now, own))
      expect(available).toEqual(new Map([[p1, 8], [p2, 4]]))
      expect(available.has(unknown)).toBe(false)

      // Seen from another session, `own` holds 3 of p1.
      expect(yield* store.transaction(store.inventory.lockStock([p1], now, other))).toEqual(new Map([[p1, 7]]))
      expect(yield* store.inventory.lockStock([], now, own)).toEqual(new Map())
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 10, reserved: 5 },
        { productId: p2, onHand: 5, reserved: 1 }
      ].sort((x, y) => (x.productId < y.productId ? -1 : 1)))
    }))

  it.effect("createSessionReservingStock: writes the session and its reservations only when every one fits", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [p1, p2, unknown] = [uid("prod_a"), uid("prod_b"), uid("prod_unknown")]
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 5 }])
      yield* store.inventory.setReservations(uid("cs"), new Map([[p1, 6]]), now + 60_000) // live: counts
      yield* store.inventory.setReservations(uid("cs"), new Map([[p2, 4]]), now - 1) // expired: does not
      const until = now + 3_600_000
      const sessionOf = (reservations: ReadonlyMap<string, number>) => ({
        session: makeSession(uid("cs"), { expires_at: iso(until) }),
        reservations
      })

      // p1: 4 available, p2: 5.
      const fits = sessionOf(new Map([[p2, 5], [p1, 4]]))
      expect(yield* store.createSessionReservingStock(fits, now)).toBe(true)
      expect(yield* store.sessions.get(fits.session.id)).toEqual(Option.some(fits.session))
      expect(yield* store.transaction(store.inventory.lockStock([p1, p2], now, uid("cs")))).toEqual(
        new Map([[p1, 0], [p2, 0]])
      )
      // Its reservations count until the session's `expires_at`.
      expect(yield* store.transaction(store.inventory.lockStock([p1], until, uid("cs")))).toEqual(new Map([[p1, 10]]))

      // Nothing left, or a product without stock: refused, nothing is written.
      const refused = sessionOf(new Map([[p1, 1], [unknown, 1]]))
      expect(yield* store.createSessionReservingStock(refused, now)).toBe(false)
      const unknownOnly = sessionOf(new Map([[unknown, 1]]))
      expect(yield* store.createSessionReservingStock(unknownOnly, now)).toBe(false)
      expect(yield* store.sessions.get(refused.session.id)).toEqual(Option.none())
      expect(yield* store.sessions.get(unknownOnly.session.id)).toEqual(Option.none())
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 10, reserved: 10 },
        { productId: p2, onHand: 5, reserved: 5 }
      ].sort((x, y) => (x.productId < y.productId ? -1 : 1)))

      // No reservations: the session alone. A duplicate id fails and changes nothing.
      expect(yield* store.createSessionReservingStock(sessionOf(new Map()), now)).toBe(true)
      const duplicate = yield* Effect.flip(
        store.createSessionReservingStock({ session: fits.session, reservations: new Map([[p2, 0]]) }, now)
      )
      expect(duplicate).toBeInstanceOf(StorageError)
    }))

  it.effect("createSessionReservingStock with an answer: both in one step; a lost claim or a refusal stores neither", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const keys = yield* IdempotencyStore
      const p1 = uid("prod_a")
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      yield* store.inventory.seedStock([{ id: p1, stock: 5 }])
      const sessionOf = (quantity: number) => ({
        session: makeSession(uid("cs"), { expires_at: iso(now + 3_600_000) }),
        reservations: new Map([[p1, quantity]])
      })
      const { answerOf, completed, scope } = yield* claimedKey(now)

      // The claim is another request's now: the step fails and writes nothing.
      const lost = sessionOf(2)
      expect(yield* Effect.flip(store.createSessionReservingStock(lost, now, answerOf("claim_b")))).toBe(claimLost)
      expect(yield* store.sessions.get(lost.session.id)).toEqual(Option.none())
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 5, reserved: 0 }])
      // Refused (does not fit): nothing written, the answer not stored.
      expect(yield* store.createSessionReservingStock(sessionOf(6), now, answerOf("claim_a"))).toBe(false)
      expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))
      // Written: the session, its reservation and the answer.
      const written = sessionOf(2)
      expect(yield* store.createSessionReservingStock(written, now, answerOf("claim_a"))).toBe(true)
      expect(yield* store.sessions.get(written.session.id)).toEqual(Option.some(written.session))
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 5, reserved: 2 }])
      expect(yield* keys.find(scope, now)).toEqual(Option.some(completed))
    }))

  it.effect("updateSessionKeepingItems with an answer: both in one step; a lost claim or a stale version stores neither", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const keys = yield* IdempotencyStore
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      const { answerOf, completed, scope } = yield* claimedKey(now)
      const changed = { ...session, updated_at: "2026-01-30T12:01:00.000Z" }

      expect(yield* Effect.flip(store.updateSessionKeepingItems(changed, 1, answerOf("claim_b")))).toBe(claimLost)
      expect(yield* versionedSession(store, session.id)).toEqual(Option.some({ session, version: 1 }))
      expect(yield* store.updateSessionKeepingItems(changed, 2, answerOf("claim_a"))).toBe(false)
      expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))
      expect(yield* store.updateSessionKeepingItems(changed, 1, answerOf("claim_a"))).toBe(true)
      expect(yield* versionedSession(store, session.id)).toEqual(Option.some({ session: changed, version: 2 }))
      expect(yield* keys.find(scope, now)).toEqual(Option.some(completed))
    }))

  it.effect("updateSessionKeepingItems: at the version read, the session and its reservations' expiry; else nothing", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const p1 = uid("prod_a")
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
      expect(yield* versionedSession(store, uid("cs_missing"))).toEqual(Option.none())
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
      const v1 = Option.getOrThrow(yield* versionedSession(store, session.id))
      expect(v1).toEqual({ session, version: 1 })
      const written: Array<number> = [v1.version]
      const later = now + 3_600_000
      const first = { ...session, updated_at: "2026-01-30T12:01:00.000Z", expires_at: iso(later) }
      expect(yield* store.updateSessionKeepingItems(first, v1.version)).toBe(true)
      const v2 = Option.getOrThrow(yield* versionedSession(store, session.id))
      expect(v2.session).toEqual(first)
      written.push(v2.version)
      // Still 3 held after the old expiry, until the session's new one; the counters did not move.
      const other = uid("cs")
      expect(yield* store.transaction(store.inventory.lockStock([p1], now + 120_000, other))).toEqual(
        new Map([[p1, 7]])
      )
      expect(yield* store.transaction(store.inventory.lockStock([p1], later, other))).toEqual(new Map([[p1, 10]]))
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])

      // Read at v1, written since: nothing written.
      const stale = { ...session, status: "canceled" as const, expires_at: iso(now) }
      expect(yield* store.updateSessionKeepingItems(stale, v1.version)).toBe(false)
      expect(Option.getOrThrow(yield* versionedSession(store, session.id))).toEqual(v2)
      expect(yield* store.transaction(store.inventory.lockStock([p1], now + 120_000, other))).toEqual(
        new Map([[p1, 7]])
      )

      // Every other kind of write moves the version too, and answers it.
      written.push(yield* store.sessions.update({ ...first, status: "ready_for_payment" }))
      written.push(yield* store.startPaymentAttempt(first, attemptOf(session.id, 1)))
      yield* store.updateSessionAndReservations({ session: first, reservations: new Map([[p1, 2]]) })
      written.push(Option.getOrThrow(yield* versionedSession(store, session.id)).version)
      expect(Option.getOrThrow(yield* store.transaction(store.sessions.lock(session.id))).version).toBe(
        written.at(-1)
      )
      expect(new Set(written).size).toBe(written.length)
      expect(written).toEqual([...written].sort((a, b) => a - b))
      expect(yield* store.updateSessionKeepingItems(stale, v2.version)).toBe(false)
      // A session without reservations; a missing session is not written.
      const bare = makeSession(uid("cs"))
      yield* store.sessions.insert(bare)
      expect(yield* store.updateSessionKeepingItems(bare, 1)).toBe(true)
      expect(yield* store.updateSessionKeepingItems(makeSession(uid("cs")), 1)).toBe(false)
    }))

  it.effect("updateSessionAndReservations: the session, and its reservations replaced or released", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [p1, p2] = [uid("prod_a"), uid("prod_b")].sort() as [string, string]
      const now = Date.parse("2026-01-30T12:00:00.000Z")
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 10 }])
      const session = makeSession(uid("cs"), { expires_at: iso(now + 60_000) })
      yield* store.sessions.insert(session)
      yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
      const changed = { ...session, expires_at: iso(now + 120_000) }
      yield* store.updateSessionAndReservations({ session: changed, reservations: new Map([[p2, 4]]) })
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(changed))
      expect(yield* levelsOf([p1, p2], now + 90_000)).toEqual([
        { productId: p1, onHand: 10, reserved: 0 },
        { productId: p2, onHand: 10, reserved: 4 }
      ])
      const canceled = { ...changed, status: "canceled" as const }
      yield* store.updateSessionAndReservations({ session: canceled, reservations: new Map() })
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(canceled))
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 10, reserved: 0 },
        { productId: p2, onHand: 10, reserved: 0 }
      ])
      const missing = yield* Effect.flip(
        store.updateSessionAndReservations({ session: makeSession(uid("cs")), reservations: new Map() })
      )
      expect(missing).toBeInstanceOf(StorageError)
    }))

  it.effect("setReservations replaces the session's reservations", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [p1, p2] = [uid("prod_a"), uid("prod_b")]
      const session = uid("cs")
      const now = Date.now()
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 10 }])
      yield* store.inventory.setReservations(session, new Map([[p1, 2], [p2, 1]]), now + 60_000)
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 10, reserved: 2 },
        { productId: p2, onHand: 10, reserved: 1 }
      ])
      yield* store.inventory.setReservations(session, new Map([[p2, 3]]), now + 60_000)
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 10, reserved: 0 },
        { productId: p2, onHand: 10, reserved: 3 }
      ])
      // The new expiry applies: at now + 2 min they no longer count.
      yield* store.inventory.setReservations(session, new Map([[p2, 4]]), now + 60_000)
      expect(yield* levelsOf([p2], now + 120_000)).toEqual([{ productId: p2, onHand: 10, reserved: 0 }])
      yield* store.inventory.setReservations(session, new Map(), now + 60_000)
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 10, reserved: 0 },
        { productId: p2, onHand: 10, reserved: 0 }
      ])
    }))

  it.effect("consumeReservations lowers on hand and removes them", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [p1, p2] = [uid("prod_a"), uid("prod_b")]
      const [session, other] = [uid("cs"), uid("cs")]
      const now = Date.now()
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 3 }])
      yield* store.inventory.setReservations(session, new Map([[p1, 4], [p2, 3]]), now + 60_000)
      yield* store.inventory.setReservations(other, new Map([[p1, 1]]), now + 60_000)
      yield* store.transaction(store.inventory.consumeReservations(session))
      expect(yield* levelsOf([p1, p2], now)).toEqual([
        { productId: p1, onHand: 6, reserved: 1 },
        { productId: p2, onHand: 0, reserved: 0 }
      ])
      expect(yield* store.inventory.lockStock([p1, p2], now, other)).toEqual(new Map([[p1, 6], [p2, 0]]))
      // Nothing left to consume.
      yield* store.inventory.consumeReservations(session)
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 6, reserved: 1 }])
    }))

  it.effect("releaseReservations returns the units", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const p1 = uid("prod")
      const session = uid("cs")
      const now = Date.now()
      yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
      yield* store.inventory.setReservations(session, new Map([[p1, 4]]), now + 60_000)
      expect(yield* store.inventory.lockStock([p1], now, uid("cs"))).toEqual(new Map([[p1, 6]]))
      yield* store.inventory.releaseReservations(session)
      expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 0 }])
      expect(yield* store.inventory.lockStock([p1], now, uid("cs"))).toEqual(new Map([[p1, 10]]))
      yield* store.inventory.releaseReservations(session)
    }))

  it.effect("seedStock keeps the stock already stored", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [p1, p2] = [uid("prod_a"), uid("prod_b")]
      yield* store.inventory.seedStock([{ id: p1, stock: 5 }])
      yield* store.inventory.seedStock([{ id: p1, stock: 100 }, { id: p2, stock: 7 }])
      yield* store.inventory.seedStock([])
      expect(yield* levelsOf([p1, p2], Date.now())).toEqual([
        { productId: p1, onHand: 5, reserved: 0 },
        { productId: p2, onHand: 7, reserved: 0 }
      ])
    }))

  it.effect("stockLevels lists every product in id order", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const levels = yield* store.inventory.stockLevels(Date.now())
      const ids = Chunk.fromIterable(levels.map((level) => level.productId))
      expect(Chunk.toReadonlyArray(ids)).toEqual([...Chunk.toReadonlyArray(ids)].sort())
    }))
}
