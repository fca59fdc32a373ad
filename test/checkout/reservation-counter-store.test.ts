/**
 * The reserved-units counter (`stock.reserved`, migration 0007) at the store level, on every store
 * (memory, SQL on embedded PGlite, SQL on PostgreSQL when TEST_DATABASE_URL is set): random
 * sequences of reservation writes, sweeps and consumptions against a model; `lockStock` and
 * `stockLevels` must say what the model says. On SQL stores, after every step, the counter must
 * equal an independent `SUM` over `reservations` and `stockLevels` an independent `SUM` of the live
 * ones. Also: expired reservations not swept yet count for nobody; a failed transaction (or a
 * rolled-back savepoint) leaves the counters as they were.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { uid } from "./checkout-store-fixtures.ts"
import { checkSqlInvariants, random, storeLevels } from "./reservation-counter-fixtures.ts"

interface ModelReservation {
  readonly items: ReadonlyMap<string, number>
  readonly expiresAt: number
}

interface Model {
  readonly onHand: Map<string, number>
  readonly sessions: Map<string, ModelReservation>
}

const liveHeld = (model: Model, productId: string, now: number, except?: string) => {
  let held = 0
  for (const [sessionId, reservation] of model.sessions) {
    if (sessionId !== except && reservation.expiresAt > now) held += reservation.items.get(productId) ?? 0
  }
  return held
}

const modelLevels = (model: Model, now: number) =>
  [...model.onHand.keys()].sort().map((productId) => ({
    productId,
    onHand: model.onHand.get(productId)!,
    reserved: liveHeld(model, productId, now)
  }))

/** One random sequence of `steps` operations on fresh products and sessions. */
const randomSequence = (seed: number, steps: number) =>
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const rng = random(seed)
    // One id with characters that need quoting in an SQL array literal.
    const products = [...Array.from({ length: 3 }, (_, i) => uid(`prod_${i}`)), uid(`prod "3",{x}\\ y`)].sort()
    const sessions = Array.from({ length: 6 }, () => uid("cs"))
    const model: Model = { onHand: new Map(), sessions: new Map() }
    for (const productId of products) model.onHand.set(productId, rng.int(4, 12))
    yield* store.inventory.seedStock(products.map((id) => ({ id, stock: model.onHand.get(id)! })))
    let now = Date.parse("2030-01-01T00:00:00.000Z")

    for (let step = 0; step < steps; step++) {
      const context = `seed ${seed}, step ${step}`
      now += rng.pick([0, 0, 1_000, 5_000, 20_000])
      const sessionId = rng.pick(sessions)
      const dice = rng.next()
      if (dice < 0.45) {
        // Replace the session's reservations (sometimes with nothing, sometimes unchanged).
        const current = model.sessions.get(sessionId)
        const keep = current !== undefined && rng.next() < 0.2
        const items = new Map<string, number>(keep ? current.items : [])
        if (!keep) {
          for (const productId of products) if (rng.next() < 0.4) items.set(productId, rng.int(1, 3))
        }
        // Expired already, at the boundary, or live for a while.
        const expiresAt = keep && rng.next() < 0.5 ? current.expiresAt : now + rng.pick([-5_000, 0, 10_000, 60_000])
        yield* store.transaction(store.inventory.setReservations(sessionId, items, expiresAt))
        if (items.size === 0) model.sessions.delete(sessionId)
        else model.sessions.set(sessionId, { items, expiresAt })
      } else if (dice < 0.6) {
        yield* store.transaction(store.inventory.releaseReservations(sessionId))
        model.sessions.delete(sessionId)
      } else if (dice < 0.7) {
        // What the expiry sweep does: release every session whose reservations have expired.
        const expired = [...model.sessions].filter(([, r]) => r.expiresAt <= now).map(([id]) => id)
        yield* store.transaction(
          Effect.forEach(expired, (id) => store.inventory.releaseReservations(id), { discard: true })
        )
        for (const id of expired) model.sessions.delete(id)
      } else if (dice < 0.8) {
        const reservation = model.sessions.get(sessionId)
        const enough = reservation === undefined ||
          [...reservation.items].every(([productId, quantity]) => model.onHand.get(productId)! >= quantity)
        const exit = yield* Effect.exit(store.transaction(store.inventory.consumeReservations(sessionId)))
        if (enough) {
          expect(exit._tag, context).toBe("Success")
          for (const [productId, quantity] of reservation?.items ?? []) {
            model.onHand.set(productId, model.onHand.get(productId)! - quantity)
          }
          model.sessions.delete(sessionId)
        } else {
          // Stock would go negative: the whole call fails and changes nothing.
          expect(exit._tag, context).toBe("Failure")
        }
      } else {
        const asked = products.filter(() => rng.next() < 0.6)
        const available = yield* store.transaction(store.inventory.lockStock(asked, now, sessionId))
        expect(available, context).toEqual(
          new Map(
            [...asked].sort().map((productId) => [
              productId,
              model.onHand.get(productId)! - liveHeld(model, productId, now, sessionId)
            ])
          )
        )
      }
      expect(yield* storeLevels(products, now), context).toEqual(modelLevels(model, now))
      yield* checkSqlInvariants(now, products)
    }
  })

const counterContract = <E>(name: string, storeLayer: Layer.Layer<CheckoutStore, E>) =>
  layer(storeLayer, { timeout: 120_000, excludeTestServices: true })(name, (it) => {
    it.effect("random reservation sequences: lockStock and stockLevels follow the model", () =>
      Effect.forEach([1, 2, 3, 4], (seed) => randomSequence(seed, 120), { discard: true }))

    it.effect("expired reservations not swept yet count for nobody; the sweep changes no availability", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const product = uid("prod")
        const [stale, live, asking] = [uid("cs"), uid("cs"), uid("cs")]
        const now = Date.parse("2030-01-01T00:00:00.000Z")
        yield* store.inventory.seedStock([{ id: product, stock: 10 }])
        yield* store.inventory.setReservations(stale, new Map([[product, 6]]), now + 1_000)
        yield* store.inventory.setReservations(live, new Map([[product, 3]]), now + 60_000)
        expect(yield* store.transaction(store.inventory.lockStock([product], now, asking))).toEqual(
          new Map([[product, 1]])
        )
        // One second later the stale reservation has expired; nobody has swept it.
        const later = now + 1_000
        expect(yield* store.transaction(store.inventory.lockStock([product], later, asking))).toEqual(
          new Map([[product, 7]])
        )
        expect(yield* store.transaction(store.inventory.lockStock([product], later, stale))).toEqual(
          new Map([[product, 7]])
        )
        expect(yield* store.transaction(store.inventory.lockStock([product], later, live))).toEqual(
          new Map([[product, 10]])
        )
        expect(yield* storeLevels([product], later)).toEqual([{ productId: product, onHand: 10, reserved: 3 }])
        yield* checkSqlInvariants(later, [product])
        // Reserving all that is available while the expired rows are still there.
        yield* store.transaction(store.inventory.setReservations(asking, new Map([[product, 7]]), later + 60_000))
        expect(yield* store.transaction(store.inventory.lockStock([product], later, uid("cs")))).toEqual(
          new Map([[product, 0]])
        )
        yield* checkSqlInvariants(later, [product])
        // The sweep releases the stale rows: nothing changes for anyone.
        yield* store.transaction(store.inventory.releaseReservations(stale))
        expect(yield* store.transaction(store.inventory.lockStock([product], later, uid("cs")))).toEqual(
          new Map([[product, 0]])
        )
        expect(yield* store.transaction(store.inventory.lockStock([product], later, asking))).toEqual(
          new Map([[product, 7]])
        )
        expect(yield* storeLevels([product], later)).toEqual([{ productId: product, onHand: 10, reserved: 10 }])
        yield* checkSqlInvariants(later, [product])
        // The store does not refuse a reservation beyond what is available (the reducer does): a
        // stale session renewing its reservation overbooks, and everyone sees it.
        yield* store.transaction(store.inventory.setReservations(stale, new Map([[product, 6]]), later + 60_000))
        expect(yield* store.transaction(store.inventory.lockStock([product], later, stale))).toEqual(
          new Map([[product, 0]])
        )
        expect(yield* store.transaction(store.inventory.lockStock([product], later, uid("cs")))).toEqual(
          new Map([[product, -6]])
        )
        yield* checkSqlInvariants(later, [product])
      }))

    it.effect("a failed transaction leaves the counters as they were", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2] = [uid("prod_a"), uid("prod_b")].sort()
        const session = uid("cs")
        const now = Date.parse("2030-01-01T00:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1!, stock: 5 }, { id: p2!, stock: 5 }])
        yield* store.inventory.setReservations(session, new Map([[p1!, 2]]), now + 60_000)
        const failed = yield* Effect.flip(store.transaction(Effect.gen(function*() {
          yield* store.inventory.setReservations(session, new Map([[p1!, 1], [p2!, 4]]), now + 60_000)
          yield* store.transaction(store.inventory.consumeReservations(session))
          return yield* Effect.fail("boom" as const)
        })))
        expect(failed).toBe("boom")
        expect(yield* storeLevels([p1!, p2!], now)).toEqual([
          { productId: p1, onHand: 5, reserved: 2 },
          { productId: p2, onHand: 5, reserved: 0 }
        ])
        yield* checkSqlInvariants(now, [p1!, p2!])
        // A savepoint rolled back inside a transaction that commits.
        yield* store.transaction(Effect.gen(function*() {
          yield* Effect.flip(store.transaction(
            Effect.zipRight(store.inventory.releaseReservations(session), Effect.fail("inner" as const))
          ))
          yield* store.inventory.setReservations(session, new Map([[p1!, 3]]), now + 60_000)
        }))
        expect(yield* storeLevels([p1!, p2!], now)).toEqual([
          { productId: p1, onHand: 5, reserved: 3 },
          { productId: p2, onHand: 5, reserved: 0 }
        ])
        yield* checkSqlInvariants(now, [p1!, p2!])
      }))
  })

counterContract("reservation counter: memory", MemoryCheckoutStore.pipe(Layer.provide(freshMemoryDatabase)))

counterContract(
  "reservation counter: SQL on embedded PGlite",
  SqlCheckoutStore.pipe(Layer.provideMerge(embeddedDatabase()))
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  counterContract(
    "reservation counter: SQL on PostgreSQL",
    SqlCheckoutStore.pipe(Layer.provideMerge(postgresDatabase()))
  )
})
