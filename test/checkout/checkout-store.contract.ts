/**
 * The behaviour every `CheckoutStore` must have. `checkoutStoreContract(name, layer)` registers the
 * cases for one implementation: sessions and transactions, stock and reservations, and payment
 * (one file each beside this one), and concurrency (here). Each case uses its own ids, so the
 * cases share one store.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, type Layer, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { ACTIVE_STATUSES } from "../../src/checkout/session/session.ts"
import type { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import type { OrderStore } from "../../src/orders/order-store.ts"
import { attemptOf, levelsOf, makeSession, uid } from "./checkout-store-fixtures.ts"
import { paymentCases } from "./checkout-store-payment.contract.ts"
import { sessionCases } from "./checkout-store-sessions.contract.ts"
import { stockCases } from "./checkout-store-stock.contract.ts"

/** The services the contract runs on: the checkout store, and the stores its writes reach. */
export type StoreUnderContract = CheckoutStore | OrderStore | IdempotencyStore

export interface ContractOptions {
  /** The store has several connections with real row locks (PostgreSQL, not PGlite). */
  readonly multiConnection: boolean
  readonly timeout?: number
}

export const checkoutStoreContract = <E>(
  name: string,
  storeLayer: Layer.Layer<StoreUnderContract, E>,
  options: ContractOptions
) =>
  layer(storeLayer, { timeout: options.timeout ?? 60_000, excludeTestServices: true })(name, (it) => {
    sessionCases(it)
    stockCases(it)
    paymentCases(it)

    // -------------------------------------------------------------------------------------------
    // Concurrency (meaningful with several connections; serialized elsewhere, still must hold)

    it.effect("20 concurrent reservations of 1 unit against a stock of 5 → exactly 5", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const product = uid("prod")
        const now = Date.now()
        yield* store.inventory.seedStock([{ id: product, stock: 5 }])
        const results = yield* Effect.forEach(
          Array.from({ length: 20 }, () => uid("cs")),
          (session) =>
            store.transaction(Effect.gen(function*() {
              const available = yield* store.inventory.lockStock([product], now, session)
              if ((available.get(product) ?? 0) < 1) return false
              yield* Effect.yieldNow()
              yield* store.inventory.setReservations(session, new Map([[product, 1]]), now + 60_000)
              return true
            })),
          { concurrency: "unbounded" }
        )
        expect(results.filter((ok) => ok)).toHaveLength(5)
        expect(yield* levelsOf([product], now)).toEqual([{ productId: product, onHand: 5, reserved: 5 }])
      }))

    it.effect("concurrent transactions on one session serialize (no lost update)", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"), { items: [{ id: "prod_counter", quantity: 1 }] })
        yield* store.sessions.insert(session)
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          () =>
            store.transaction(Effect.gen(function*() {
              const { session: current } = Option.getOrThrow(yield* store.sessions.lock(session.id))
              yield* Effect.sleep("2 millis")
              const item = current.items[0]!
              yield* store.sessions.update({ ...current, items: [{ ...item, quantity: item.quantity + 1 }] })
            })),
          { concurrency: "unbounded" }
        )
        const final = Option.getOrThrow(yield* store.sessions.get(session.id))
        expect(final.items[0]!.quantity).toBe(21)
      }))

    if (options.multiConnection) {
      it.effect("lockExpiredSessions skips sessions locked by another transaction", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const at = (seconds: number) =>
            new Date(Date.parse("2002-01-01T00:00:00.000Z") + seconds * 1000).toISOString()
          const first = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(1) })
          const second = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(2) })
          yield* store.sessions.insert(first)
          yield* store.sessions.insert(second)
          const now = Date.parse(at(10))

          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.sessions.lock(first.id)
            yield* locked.open
            yield* release.await
          })))
          yield* locked.await
          // A sweep in another transaction does not wait for the held row and takes the next one.
          const ids = yield* store.transaction(store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).pipe(
            Effect.timeout("5 seconds")
          )
          yield* release.open
          yield* Fiber.join(holder)
          expect(ids.filter((id) => id === first.id || id === second.id)).toEqual([second.id])
          expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).toEqual(
            expect.arrayContaining([first.id, second.id])
          )
        }))

      it.effect("a second sessions.lock waits for the first transaction to commit", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const session = makeSession(uid("cs"), { items: [{ id: "prod_x", quantity: 1 }] })
          yield* store.sessions.insert(session)
          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          const events = yield* Effect.sync(() => [] as Array<string>)
          const first = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.sessions.lock(session.id)
            yield* locked.open
            yield* release.await
            events.push("first commits")
            yield* store.sessions.update({ ...session, items: [{ id: "prod_x", quantity: 2 }] })
          })))
          yield* locked.await
          const second = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            const { session: read } = Option.getOrThrow(yield* store.sessions.lock(session.id))
            events.push(`second reads ${read.items[0]!.quantity}`)
          })))
          yield* Effect.sleep("100 millis")
          events.push("released")
          yield* release.open
          yield* Fiber.join(first)
          yield* Fiber.join(second)
          expect(events).toEqual(["released", "first commits", "second reads 2"])
        }))

      it.effect("readSessionForPayment does not wait for a lock: it reads what is committed", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const session = makeSession(uid("cs"))
          yield* store.sessions.insert(session)
          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.lockSessionForPayment(session.id)
            yield* store.startPaymentAttempt(session, attemptOf(session.id, 1))
            yield* locked.open
            yield* release.await
          })))
          yield* locked.await
          const read = yield* store.readSessionForPayment(session.id)
          yield* release.open
          yield* Fiber.join(holder)
          expect(read).toEqual(Option.some({ session, version: 1, latestAttempt: Option.none(), couponHolds: [] }))
        }))
    }
  })
