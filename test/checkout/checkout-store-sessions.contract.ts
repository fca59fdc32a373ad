/**
 * The `CheckoutStore` contract: sessions and transactions (round trips, the stored wire form,
 * copies, duplicates, locks, rollback and nesting, expiry and listing). Part of
 * `checkoutStoreContract` (`./checkout-store.contract.ts`).
 */
import type { Vitest } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { ACTIVE_STATUSES, type Session, toCheckoutSession } from "../../src/checkout/session/session.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { Boom, FAR_FUTURE, levelsOf, makeSession, uid } from "./checkout-store-fixtures.ts"
import type { StoreUnderContract } from "./checkout-store.contract.ts"

export const sessionCases = (it: Vitest.MethodsNonLive<StoreUnderContract, true>) => {
  it.effect("insert, get and update round-trip a full session", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(session))

      const updated = makeSession(session.id, {
        status: "not_ready_for_payment",
        updated_at: "2026-01-30T12:05:00.000Z",
        expires_at: "2099-06-01T00:00:00.000Z",
        items: [{ id: "prod_mug", quantity: 7 }],
        order: { id: "ord_1", checkout_session_id: session.id, permalink_url: "https://m.example/o/1" }
      })
      const { buyer: _buyer, ...withoutBuyer } = updated
      yield* store.sessions.update(withoutBuyer)
      const read = yield* store.sessions.get(session.id)
      expect(read).toEqual(Option.some(withoutBuyer))
      expect(Option.getOrThrow(read)).not.toHaveProperty("buyer")

      expect(yield* store.sessions.get(uid("cs_missing"))).toEqual(Option.none())
    }))

  it.effect("sessions.getJson reads the wire form of the stored session as JSON text, as it is now", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"), {
        buyer: { first_name: "Zoë", last_name: "\"Quote\"", email: "z@example.com" }
      })
      yield* store.sessions.insert(session)
      const read = Option.getOrThrow(yield* store.sessions.getJson(session.id))
      expect(read.status).toBe("ready_for_payment")
      expect(read.expires_at).toBe(session.expires_at)
      expect(JSON.parse(read.json)).toEqual(toCheckoutSession(session))
      expect(JSON.parse(read.json)).not.toHaveProperty("items")

      const completed = makeSession(session.id, {
        status: "completed",
        expires_at: "2099-06-01T00:00:00.000Z",
        order: { id: "ord_1", checkout_session_id: session.id, permalink_url: "https://m.example/o/1" }
      })
      yield* store.sessions.update(completed)
      const after = Option.getOrThrow(yield* store.sessions.getJson(session.id))
      expect(after.status).toBe("completed")
      expect(after.expires_at).toBe("2099-06-01T00:00:00.000Z")
      const wire = JSON.parse(after.json)
      expect(wire).toEqual(toCheckoutSession(completed))
      expect(wire).not.toHaveProperty("order")
      expect(wire).not.toHaveProperty("items")

      expect(yield* store.sessions.getJson(uid("cs_missing"))).toEqual(Option.none())
    }))

  it.effect("returned and given values are copies", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      const given = structuredClone(session) as unknown as { items: Array<{ quantity: number }> }
      yield* store.sessions.insert(given as unknown as Session)
      given.items[0]!.quantity = 99
      const read = Option.getOrThrow(yield* store.sessions.get(session.id)) as unknown as {
        items: Array<{ quantity: number }>
      }
      expect(read.items[0]!.quantity).toBe(2)
      read.items[0]!.quantity = 42
      expect(Option.getOrThrow(yield* store.sessions.get(session.id)).items[0]!.quantity).toBe(2)
    }))

  it.effect("duplicate session ids and updates of missing sessions fail with StorageError", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      const duplicate = yield* Effect.flip(store.sessions.insert(session))
      expect(duplicate).toBeInstanceOf(StorageError)
      expect(duplicate.reason).toBe("failure")
      const missing = yield* Effect.flip(store.sessions.update(makeSession(uid("cs_missing"))))
      expect(missing).toBeInstanceOf(StorageError)
      expect(missing.reason).toBe("failure")
    }))

  it.effect("sessions.lock returns None for a missing id and the session with its version otherwise", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      expect(yield* store.transaction(store.sessions.lock(uid("cs_missing")))).toEqual(Option.none())
      expect(yield* store.transaction(store.sessions.lock(session.id))).toEqual(Option.some({ session, version: 1 }))
    }))

  it.effect("a failed transaction leaves no trace", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const product = uid("prod")
      const session = makeSession(uid("cs"))
      yield* store.inventory.seedStock([{ id: product, stock: 5 }])

      const error = yield* Effect.flip(store.transaction(Effect.gen(function*() {
        yield* store.sessions.insert(session)
        yield* store.inventory.setReservations(session.id, new Map([[product, 2]]), Date.parse(FAR_FUTURE))
        yield* store.inventory.consumeReservations(session.id)
        expect(yield* levelsOf([product], Date.now())).toEqual([{ productId: product, onHand: 3, reserved: 0 }])
        yield* store.inventory.setReservations(session.id, new Map([[product, 1]]), Date.parse(FAR_FUTURE))
        return yield* Effect.fail(new Boom())
      })))
      expect(error).toBeInstanceOf(Boom)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.none())
      expect(yield* levelsOf([product], Date.now())).toEqual([{ productId: product, onHand: 5, reserved: 0 }])

      // An interrupted transaction is rolled back too.
      const exit = yield* Effect.exit(store.transaction(
        Effect.zipRight(store.sessions.insert(session), Effect.interrupt)
      ))
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.none())

      // A defect as well.
      const defect = yield* Effect.exit(store.transaction(
        Effect.zipRight(store.sessions.insert(session), Effect.die("bug"))
      ))
      expect(Exit.isFailure(defect)).toBe(true)
      expect(yield* store.sessions.get(session.id)).toEqual(Option.none())
    }))

  it.effect("nested transactions join the outer one; an inner failure undoes only its writes", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const [a, b, c] = [makeSession(uid("cs")), makeSession(uid("cs")), makeSession(uid("cs"))]

      const seen = yield* store.transaction(Effect.gen(function*() {
        yield* store.sessions.insert(a)
        const inner = yield* store.transaction(Effect.gen(function*() {
          yield* store.sessions.insert(b)
          return Option.map(yield* store.sessions.lock(a.id), (locked) => locked.session)
        }))
        const failed = yield* Effect.flip(store.transaction(
          Effect.zipRight(store.sessions.insert(c), Effect.fail(new Boom()))
        ))
        expect(failed).toBeInstanceOf(Boom)
        expect(yield* store.sessions.get(c.id)).toEqual(Option.none())
        expect(yield* store.sessions.get(b.id)).toEqual(Option.some(b))
        return inner
      }))
      expect(seen).toEqual(Option.some(a))
      expect(yield* store.sessions.get(a.id)).toEqual(Option.some(a))
      expect(yield* store.sessions.get(b.id)).toEqual(Option.some(b))
      expect(yield* store.sessions.get(c.id)).toEqual(Option.none())

      // The outer failure undoes the inner, committed-to-the-outer, writes.
      const [d, e] = [makeSession(uid("cs")), makeSession(uid("cs"))]
      yield* Effect.flip(store.transaction(Effect.gen(function*() {
        yield* store.sessions.insert(d)
        yield* store.transaction(store.sessions.insert(e))
        return yield* Effect.fail(new Boom())
      })))
      expect(yield* store.sessions.get(d.id)).toEqual(Option.none())
      expect(yield* store.sessions.get(e.id)).toEqual(Option.none())
    }))

  it.effect("a duplicate session id fails; inside a transaction the failure is caught and the rest commits", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const session = makeSession(uid("cs"))
      yield* store.sessions.insert(session)
      const duplicate = yield* Effect.flip(store.sessions.insert({ ...session, status: "canceled" }))
      expect(duplicate).toBeInstanceOf(StorageError)
      expect(duplicate.reason).toBe("failure")
      expect(yield* store.sessions.get(session.id)).toEqual(Option.some(session))

      // Inside a transaction the failure can be caught and the transaction goes on (savepoint).
      const other = makeSession(uid("cs"))
      yield* store.transaction(Effect.gen(function*() {
        yield* store.sessions.insert(other)
        const failed = yield* Effect.flip(store.transaction(store.sessions.insert(session)))
        expect(failed).toBeInstanceOf(StorageError)
      }))
      expect(yield* store.sessions.get(other.id)).toEqual(Option.some(other))
    }))

  it.effect("lockExpiredSessions: sessions of the given statuses past their expiry, oldest first, limited", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      // Far in the past, so that no other case's session is concerned.
      const at = (seconds: number) => new Date(Date.parse("2001-01-01T00:00:00.000Z") + seconds * 1000).toISOString()
      const first = makeSession(uid("cs"), { status: "not_ready_for_payment", expires_at: at(1) })
      const second = makeSession(uid("cs"), { status: "authentication_required", expires_at: at(2) })
      const third = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(3) })
      const completed = makeSession(uid("cs"), { status: "completed", expires_at: at(0) })
      const canceled = makeSession(uid("cs"), { status: "canceled", expires_at: at(0) })
      const later = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(100) })
      for (const session of [later, third, completed, first, canceled, second]) yield* store.sessions.insert(session)

      const now = Date.parse(at(3))
      expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).toEqual([first.id, second.id, third.id])
      expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 2)).toEqual([first.id, second.id])
      expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, Date.parse(at(1)) - 1, 10)).toEqual([])
      expect(yield* store.transaction(store.lockExpiredSessions(ACTIVE_STATUSES, now, 1))).toEqual([first.id])

      yield* store.sessions.update({ ...first, status: "expired" })
      expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).toEqual([second.id, third.id])
    }))

  it.effect("sessions.list: newest first, of one status when asked, limited; each as get reads it", () =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      // Created (and inserted) after every other case's session, so that these come first.
      const at = (seconds: number) => new Date(Date.parse("2900-01-01T00:00:00.000Z") + seconds * 1000).toISOString()
      const first = makeSession(uid("cs"), { status: "canceled", created_at: at(1) })
      const second = makeSession(uid("cs"), { status: "ready_for_payment", created_at: at(2) })
      const third = makeSession(uid("cs"), { status: "canceled", created_at: at(3) })
      for (const session of [first, second, third]) yield* store.sessions.insert(session)

      expect(yield* store.sessions.list({ limit: 3 })).toEqual([third, second, first])
      expect(yield* store.sessions.list({ limit: 2 })).toEqual([third, second])
      expect(yield* store.sessions.list({ status: "canceled", limit: 2 })).toEqual([third, first])
      expect(yield* store.sessions.list({ status: "canceled", limit: 1 })).toEqual([third])
      expect(yield* store.sessions.list({ limit: 0 })).toEqual([])

      // A write keeps the session's place and moves it to the status it now has.
      const completed = makeSession(first.id, {
        status: "completed",
        created_at: first.created_at,
        updated_at: at(10),
        order: { id: uid("ord"), checkout_session_id: first.id, permalink_url: "https://m.example/o/1" }
      })
      yield* store.sessions.update(completed)
      const listed = yield* store.sessions.list({ limit: 3 })
      expect(listed).toEqual([third, second, completed])
      expect(yield* store.sessions.list({ status: "completed", limit: 1 })).toEqual([completed])
      expect(yield* store.sessions.list({ status: "canceled", limit: 1 })).toEqual([third])
      for (const session of listed) {
        expect(Option.some(session)).toEqual(yield* store.sessions.get(session.id))
      }
    }))

  it.effect("ping", () => Effect.flatMap(CheckoutStore, (store) => store.ping))
}
