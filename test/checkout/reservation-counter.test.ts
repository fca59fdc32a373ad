/**
 * The reserved-units counter (`stock.reserved`, migration 0007) and what rests on it.
 *
 * - Store level, on every store (memory, SQL on embedded PGlite, SQL on PostgreSQL when
 *   TEST_DATABASE_URL is set): random sequences of reservation writes, sweeps and consumptions
 *   against a model; `lockStock` and `stockLevels` must say what the model says. On SQL stores,
 *   after every step, the counter must equal an independent `SUM` over `reservations` and
 *   `stockLevels` an independent `SUM` of the live ones.
 * - Service level, on the SQL stores: create / update / complete / cancel / expire through the
 *   checkout service, the same checks after each step; expired reservations not swept yet do not
 *   count.
 * - PostgreSQL only: many concurrent creates, updates, cancels and sweeps on the same products
 *   never oversell nor deadlock; migration 0007 backfills the counter from existing rows.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, Effect, Either, Fiber, Layer, Option, Redacted, TestClock } from "effect"
import { randomUUID } from "node:crypto"
import type { CheckoutSessionCreateRequest } from "../../src/checkout/checkout-schemas.ts"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import type { Session } from "../../src/checkout/session-model.ts"
import { SqlCheckoutStore } from "../../src/checkout/sql-checkout-store.ts"
import { STOCK_SHARDS } from "../../src/db/functions/stock-shards.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { SqlVaultStore } from "../../src/delegate/sql-vault-store.ts"
import { SqlOrderStore } from "../../src/orders/sql-order-store.ts"
import { SqlChargeStore } from "../../src/payments/sql-charge-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { address, buyer, paymentData, testApp } from "../support/http.ts"
import { truncateAll } from "../support/store-under-test.ts"
import {
  embeddedDatabase,
  freshPostgresDatabaseUrl,
  hasPostgres,
  postgresDatabase,
  type TestDatabase
} from "../support/test-database.ts"
import { makeSession } from "./checkout-store-fixtures.ts"

const uid = (prefix: string) => `${prefix}_${randomUUID().replaceAll("-", "")}`

/** A small deterministic PRNG (mulberry32), so that a failing sequence can be replayed. */
const random = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <A>(values: ReadonlyArray<A>): A => values[Math.floor(next() * values.length)]!
  }
}

// ---------------------------------------------------------------------------------------------
// Independent checks on the SQL tables

/**
 * Products whose reserved units (the stock row's counter with its shards, `stock_totals`) differ
 * from the sum of all their reservation rows.
 */
const counterDrift = (sql: SqlClient.SqlClient, productIds?: ReadonlyArray<string>) =>
  sql<{ product_id: string; reserved: number; total: number }>`
    SELECT s.product_id, s.reserved, COALESCE(r.total, 0)::int AS total
    FROM stock_totals s
    LEFT JOIN (SELECT product_id, SUM(quantity) AS total FROM reservations GROUP BY product_id) r
      ON r.product_id = s.product_id
    WHERE s.reserved <> COALESCE(r.total, 0)
      ${productIds === undefined ? sql`` : sql`AND s.product_id = ANY (${[...productIds]}::text[])`}`.pipe(
    Effect.orDie
  )

/** On hand and live reservations per product, summed from the rows (not from the counter). */
const summedLevels = (sql: SqlClient.SqlClient, now: number) =>
  sql<{ product_id: string; on_hand: number; reserved: number }>`
    SELECT s.product_id, s.on_hand,
           COALESCE(SUM(r.quantity) FILTER (WHERE r.expires_at > ${new Date(now).toISOString()}::timestamptz), 0)::int
             AS reserved
    FROM stock_totals s LEFT JOIN reservations r ON r.product_id = s.product_id
    GROUP BY s.product_id, s.on_hand
    ORDER BY s.product_id COLLATE "C"`.pipe(
    Effect.orDie,
    Effect.map((rows) =>
      rows.map((row) => ({ productId: row.product_id, onHand: Number(row.on_hand), reserved: Number(row.reserved) }))
    )
  )

/** On SQL stores: the counter is exact and `stockLevels` agrees with the summed rows. */
const checkSqlInvariants = (now: number, productIds?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    if (Option.isNone(sql)) return
    expect(yield* counterDrift(sql.value, productIds)).toEqual([])
    const store = yield* CheckoutStore
    const keep = <A extends { readonly productId: string }>(levels: ReadonlyArray<A>) =>
      productIds === undefined ? levels : levels.filter((level) => productIds.includes(level.productId))
    expect(keep(yield* store.inventory.stockLevels(now))).toEqual(keep(yield* summedLevels(sql.value, now)))
  })

// ---------------------------------------------------------------------------------------------
// Store level, against a model

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

const storeLevels = (productIds: ReadonlyArray<string>, now: number) =>
  Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(now)).pipe(
    Effect.map((levels) => levels.filter((level) => productIds.includes(level.productId)))
  )

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

// ---------------------------------------------------------------------------------------------
// SQL store details

const sqlStoreDetails = (name: string, database: TestDatabase) =>
  layer(SqlCheckoutStore.pipe(Layer.provideMerge(database)), { timeout: 60_000, excludeTestServices: true })(
    name,
    (it) => {
      it.effect("a stored session that is not what the store writes fails with StorageError", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const sql = yield* SqlClient.SqlClient
          const cases: ReadonlyArray<unknown> = [
            [],
            "a string",
            42,
            { status: "ready_for_payment" },
            { id: 7, status: "ready_for_payment" },
            { id: "cs_x", status: "unknown_status" },
            { id: "cs_x" }
          ]
          for (const data of cases) {
            const id = uid("cs")
            yield* sql`
              INSERT INTO checkout_sessions (id, status, data, expires_at)
              VALUES (${id}, 'ready_for_payment', ${JSON.stringify(data)}::jsonb, now())`.pipe(Effect.orDie)
            const read = yield* Effect.flip(store.sessions.get(id))
            expect(read).toBeInstanceOf(StorageError)
            expect(read.reason).toBe("failure")
            const locked = yield* Effect.flip(store.transaction(store.sessions.lock(id)))
            expect(locked).toBeInstanceOf(StorageError)
            expect(locked.reason).toBe("failure")
          }
        }))

      it.effect("a stock row seeded after reservations of its product starts with their sum", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const [known, late] = [uid("prod_a"), uid("prod_b")]
          const now = Date.parse("2030-01-01T00:00:00.000Z")
          yield* store.inventory.seedStock([{ id: known, stock: 5 }])
          yield* store.inventory.setReservations(uid("cs"), new Map([[known, 1], [late, 2]]), now + 60_000)
          yield* store.inventory.setReservations(uid("cs"), new Map([[late, 3]]), now - 1)
          yield* store.inventory.seedStock([{ id: late, stock: 9 }, { id: known, stock: 100 }])
          expect(yield* storeLevels([known, late].sort(), now)).toEqual(
            [{ productId: known, onHand: 5, reserved: 1 }, { productId: late, onHand: 9, reserved: 2 }].sort((a, b) =>
              a.productId < b.productId ? -1 : 1
            )
          )
          yield* checkSqlInvariants(now, [known, late])
          expect(yield* store.transaction(store.inventory.lockStock([late], now, uid("cs")))).toEqual(
            new Map([[late, 7]])
          )
        }))
    }
  )

sqlStoreDetails("SQL checkout store: embedded PGlite", embeddedDatabase())

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  sqlStoreDetails("SQL checkout store: PostgreSQL", postgresDatabase())
})

// ---------------------------------------------------------------------------------------------
// Service level

const TTL_MILLIS = 21600 * 1000

/** The application on `sql` (emptied first), as `npm start` wires it: every store on one database. */
const withApplication = <A, E>(effect: Effect.Effect<A, E, any>): Effect.Effect<A, E, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* truncateAll
    const client = Layer.succeed(SqlClient.SqlClient, sql)
    return yield* Effect.provide(
      effect,
      testApp({
        store: Layer.provide(SqlCheckoutStore, client),
        vaultStore: Layer.provide(SqlVaultStore, client),
        chargeStore: Layer.provide(SqlChargeStore, client),
        orderStore: Layer.provide(SqlOrderStore, client)
      })
    )
  }) as Effect.Effect<A, E, SqlClient.SqlClient>

const createRequest = (items: CheckoutSessionCreateRequest["items"]): CheckoutSessionCreateRequest => ({
  items,
  buyer,
  fulfillment_address: address
})

/** Counter exact, `stockLevels` as summed from the rows; returns the levels by product. */
const levelsNow = Effect.gen(function*() {
  const now = yield* Clock.currentTimeMillis
  yield* checkSqlInvariants(now)
  const levels = yield* Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(now))
  return Object.fromEntries(levels.map((level) => [level.productId, [level.onHand, level.reserved] as const]))
})

const serviceSequence = (name: string, database: TestDatabase) =>
  layer(database, { timeout: 60_000 })(name, (it) => {
    it.effect("create / update / complete / cancel / expire keep the counter exact", () =>
      withApplication(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        expect(yield* levelsNow).toMatchObject({ "tshirt-classic": [100, 0], "print-limited": [3, 0] })

        const a = yield* checkout.create(
          createRequest([{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }])
        )
        const b = yield* checkout.create(
          createRequest([{ id: "print-limited", quantity: 2 }, { id: "tshirt-classic", quantity: 1 }])
        )
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 3],
          "mug-ceramic": [250, 1],
          "print-limited": [3, 2]
        })

        // Items changed (one removed, one added, one lowered), then unchanged, then not given.
        yield* TestClock.adjust(1_000)
        yield* checkout.update(a.id, {
          items: [{ id: "tshirt-classic", quantity: 1 }, { id: "hoodie-zip", quantity: 3 }]
        })
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 2],
          "mug-ceramic": [250, 0],
          "hoodie-zip": [40, 3]
        })
        yield* TestClock.adjust(1_000)
        yield* checkout.update(a.id, {
          items: [{ id: "hoodie-zip", quantity: 3 }, { id: "tshirt-classic", quantity: 1 }]
        })
        yield* checkout.update(a.id, { fulfillment_option_id: "express" })
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 2],
          "mug-ceramic": [250, 0],
          "hoodie-zip": [40, 3]
        })
        // Not enough stock: nothing is written.
        const refused = yield* Effect.flip(checkout.update(a.id, { items: [{ id: "print-limited", quantity: 2 }] }))
        expect(refused._tag).toBe("OutOfStock")
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 2],
          "print-limited": [3, 2],
          "hoodie-zip": [40, 3]
        })

        // Completing consumes b's reservations.
        const completed = yield* checkout.complete(b.id, { payment_data: paymentData })
        expect(completed.status).toBe("completed")
        expect(yield* levelsNow).toMatchObject({ "tshirt-classic": [99, 1], "print-limited": [1, 0] })

        // Canceling releases them.
        const c = yield* checkout.create(createRequest([{ id: "print-limited", quantity: 1 }]))
        expect(yield* levelsNow).toMatchObject({ "print-limited": [1, 1] })
        yield* checkout.cancel(c.id)
        expect(yield* levelsNow).toMatchObject({ "print-limited": [1, 0] })

        // a and d expire; until the sweep their rows are still there, counted by the counter, and
        // available to everyone.
        const d = yield* checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }]))
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 4] })
        yield* TestClock.adjust(TTL_MILLIS)
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 0], "tshirt-classic": [99, 0] })
        const e = yield* checkout.create(
          createRequest([{ id: "hoodie-zip", quantity: 40 }, { id: "print-limited", quantity: 1 }])
        )
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 40], "print-limited": [1, 1] })
        const sql = yield* SqlClient.SqlClient
        const [hoodie] = yield* sql<{ reserved: number }>`
          SELECT reserved FROM stock_totals WHERE product_id = 'hoodie-zip'`
        expect(hoodie!.reserved).toBe(44)
        expect(Either.isLeft(yield* Effect.either(checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }])))))
          .toBe(true)

        expect(yield* checkout.expireDue(100)).toBe(2)
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 40], "tshirt-classic": [99, 0] })
        expect((yield* checkout.get(d.id)).status).toBe("expired")

        // The rest: one completed, one canceled; nothing stays reserved.
        yield* checkout.update(e.id, {
          items: [{ id: "hoodie-zip", quantity: 39 }, { id: "print-limited", quantity: 1 }]
        })
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 39] })
        yield* checkout.complete(e.id, { payment_data: paymentData })
        const f = yield* checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }]))
        yield* checkout.cancel(f.id)
        const levels = yield* levelsNow
        expect(levels).toMatchObject({ "hoodie-zip": [1, 0], "print-limited": [0, 0], "tshirt-classic": [99, 0] })
        for (const [, reserved] of Object.values(levels)) expect(reserved).toBe(0)
        expect(yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM reservations`).toEqual([{ n: 0 }])
      })))
  })

serviceSequence("reservation counter through the checkout service: embedded PGlite", embeddedDatabase())

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  serviceSequence("reservation counter through the checkout service: PostgreSQL", postgresDatabase())

  // -------------------------------------------------------------------------------------------
  // Concurrency (real row locks: several connections)

  /**
   * Runs `effect`, turning a refusal of the domain (out of stock, session already final, …) into
   * `undefined`. A StorageError (a deadlock would be one) fails the test.
   */
  const refused = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(
      Effect.map((value): A | undefined => value),
      Effect.catchIf((error) => error._tag !== "StorageError", () => Effect.succeed(undefined))
    )

  layer(postgresDatabase({ poolSize: 10 }), { timeout: 120_000 })("concurrency on PostgreSQL", (it) => {
    it.effect("concurrent creates never oversell", () =>
      withApplication(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const created = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => i),
          (i) =>
            checkout.create(createRequest(
              i % 2 === 0
                ? [{ id: "print-limited", quantity: 1 }, { id: "tshirt-classic", quantity: 1 }]
                : [{ id: "tshirt-classic", quantity: 1 }, { id: "print-limited", quantity: 1 }]
            )).pipe(Effect.either),
          { concurrency: "unbounded" }
        )
        expect(created.filter(Either.isRight)).toHaveLength(3)
        for (const failed of created.filter(Either.isLeft)) expect(failed.left._tag).toBe("OutOfStock")
        expect(yield* levelsNow).toMatchObject({ "print-limited": [3, 3], "tshirt-classic": [100, 3] })
      })))

    it.effect("concurrent creates, updates, cancels, completions and sweeps: no oversell, no deadlock, exact counter", () =>
      withApplication(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        // Sessions that will have expired, unswept, when the storm starts: one product each, a
        // T-shirt then a mug then a T-shirt… (a sweep releases them oldest first, so it meets
        // their products out of order), while the creates lock both.
        const stale = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) =>
          Effect.zipLeft(
            checkout.create(createRequest([
              i % 2 === 0 ? { id: "tshirt-classic", quantity: 1 } : { id: "mug-ceramic", quantity: 1 }
            ])),
            TestClock.adjust(1)
          ))
        yield* TestClock.adjust(TTL_MILLIS)
        const live = yield* Effect.forEach(
          Array.from({ length: 10 }, () => 0),
          () => checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }, { id: "mug-ceramic", quantity: 1 }]))
        )
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 10] })

        const rng = random(7)
        const creates = Array.from({ length: 40 }, () => {
          const items = [
            { id: "hoodie-zip", quantity: 1 },
            { id: "mug-ceramic", quantity: 1 },
            { id: "tshirt-classic", quantity: 1 }
          ]
          return items.map((item) => [rng.next(), item] as const).sort(([a], [b]) => a - b).map(([, item]) => item)
        })
        const tasks: Array<Effect.Effect<unknown, unknown>> = [
          ...creates.map((items) => refused(checkout.create(createRequest(items)))),
          ...live.map((session, i) =>
            refused(checkout.update(session.id, {
              items: i % 2 === 0
                ? [{ id: "tshirt-classic", quantity: 2 }, { id: "hoodie-zip", quantity: 2 }]
                : [{ id: "mug-ceramic", quantity: 3 }]
            }))
          ),
          ...live.slice(0, 3).map((session) => refused(checkout.cancel(session.id))),
          ...live.slice(3, 6).map((session) => refused(checkout.complete(session.id, { payment_data: paymentData }))),
          ...Array.from({ length: 4 }, () => checkout.expireDue(3))
        ]
        const shuffled = tasks.map((task) => [rng.next(), task] as const).sort(([a], [b]) => a - b).map(([, t]) => t)
        yield* Effect.all(shuffled, { concurrency: "unbounded", discard: true })

        while ((yield* checkout.expireDue(100)) > 0) {
          // sweep what the concurrent sweeps left
        }
        for (const session of stale) expect((yield* checkout.get(session.id)).status).toBe("expired")
        const levels = yield* levelsNow
        for (const [productId, [onHand, reserved]] of Object.entries(levels)) {
          expect(reserved, productId).toBeLessThanOrEqual(onHand)
          expect(onHand, productId).toBeGreaterThanOrEqual(0)
        }
        // Units held equal what the active sessions ask for; units gone equal what was completed.
        const sql = yield* SqlClient.SqlClient
        const created = yield* sql<{ data: Session }>`SELECT data FROM checkout_sessions`
        const held = new Map<string, number>()
        const sold = new Map<string, number>()
        for (const { data } of created) {
          const target = ["not_ready_for_payment", "ready_for_payment"].includes(data.status)
            ? held
            : data.status === "completed"
            ? sold
            : undefined
          for (const item of target === undefined ? [] : data.items) {
            target!.set(item.id, (target!.get(item.id) ?? 0) + item.quantity)
          }
        }
        expect(levels["hoodie-zip"]).toEqual([40 - (sold.get("hoodie-zip") ?? 0), held.get("hoodie-zip") ?? 0])
        expect(levels["mug-ceramic"]).toEqual([250 - (sold.get("mug-ceramic") ?? 0), held.get("mug-ceramic") ?? 0])
        expect(levels["tshirt-classic"]).toEqual([
          100 - (sold.get("tshirt-classic") ?? 0),
          held.get("tshirt-classic") ?? 0
        ])
        expect((held.get("hoodie-zip") ?? 0) + (sold.get("hoodie-zip") ?? 0)).toBeLessThanOrEqual(40)
      })))
  })

  layer(SqlCheckoutStore.pipe(Layer.provideMerge(postgresDatabase())), { timeout: 60_000, excludeTestServices: true })(
    "lockStock after waiting on PostgreSQL",
    (it) => {
      it.effect("sees what the transaction it waited for committed: an expired reservation released, a new one", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const product = uid("prod")
          const [stale, fresh, asking] = [uid("cs"), uid("cs"), uid("cs")]
          const now = Date.parse("2030-01-01T00:00:00.000Z")
          yield* store.inventory.seedStock([{ id: product, stock: 10 }])
          yield* store.inventory.setReservations(stale, new Map([[product, 4]]), now - 1)
          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          // The sweep: takes the stale rows off (counter 4 → 0) and reserves 3 for another session.
          const first = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.inventory.lockStock([product], now, fresh)
            yield* locked.open
            yield* release.await
            yield* store.inventory.releaseReservations(stale)
            yield* store.inventory.setReservations(fresh, new Map([[product, 3]]), now + 60_000)
          })))
          yield* locked.await
          const second = yield* Effect.fork(store.transaction(store.inventory.lockStock([product], now, asking)))
          yield* Effect.sleep("100 millis")
          yield* release.open
          yield* Fiber.join(first)
          // Not 10 - 3 + 4 (the stale rows as seen before the wait): they are gone.
          expect(yield* Fiber.join(second)).toEqual(new Map([[product, 7]]))
          yield* checkSqlInvariants(now, [product])
        }))

      it.effect("a stock row without shards (made by SQL): counted at the row until lockStock makes them", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const sql = yield* SqlClient.SqlClient
          const product = uid("prod")
          const [a, b, c] = [uid("cs"), uid("cs"), uid("cs")]
          const now = Date.parse("2030-01-01T00:00:00.000Z")
          const shards = Effect.map(
            sql<{ count: number }>`SELECT count(*)::int AS count FROM stock_shards WHERE product_id = ${product}`,
            (rows) => Number(rows[0]!.count)
          )
          yield* sql`INSERT INTO stock (product_id, on_hand) VALUES (${product}, 6)`
          yield* store.inventory.setReservations(a, new Map([[product, 2]]), now + 60_000)
          yield* store.inventory.setReservations(b, new Map([[product, 1]]), now + 60_000)
          yield* store.transaction(store.inventory.releaseReservations(a))
          yield* store.transaction(store.inventory.consumeReservations(b))
          expect(yield* shards).toBe(0)
          yield* checkSqlInvariants(now, [product])
          // The create finds no shard and lets the exact availability decide, which makes them.
          expect(
            yield* store.createSessionReservingStock(
              { session: makeSession(c), reservations: new Map([[product, 5]]) },
              now
            )
          ).toBe(true)
          expect(yield* shards).toBe(STOCK_SHARDS)
          yield* store.transaction(store.inventory.releaseReservations(c))
          expect(yield* store.transaction(store.inventory.lockStock([product], now, uid("cs")))).toEqual(
            new Map([[product, 5]])
          )
          yield* checkSqlInvariants(now, [product])
        }))
    }
  )

  // -------------------------------------------------------------------------------------------
  // Migration 0007

  it.live("migration 0007 backfills the counter from the reservations already stored", () =>
    Effect.gen(function*() {
      const url = Redacted.make(yield* freshPostgresDatabaseUrl)
      const before = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0007"))
      const migrate = (record: typeof migrations) => Migrator.make({})({ loader: Migrator.fromRecord(record) })
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrate(before)
        yield* sql`INSERT INTO stock (product_id, on_hand) VALUES ('a', 10), ('b', 5), ('c', 1)`
        yield* sql`
          INSERT INTO reservations (session_id, product_id, quantity, expires_at) VALUES
            ('cs_1', 'a', 2, now() + interval '1 hour'), ('cs_1', 'b', 1, now() + interval '1 hour'),
            ('cs_2', 'a', 3, now() - interval '1 hour'), ('cs_3', 'z', 4, now() + interval '1 hour')`
        expect((yield* migrate(migrations)).map(([id, name]) => `${id}_${name}`)).toEqual(
          Object.keys(migrations).filter((key) => key >= "0007").map((key) => key.replace(/^0+/, ""))
        )
        expect(
          yield* sql<{ product_id: string; reserved: number }>`
          SELECT product_id, reserved FROM stock ORDER BY product_id`
        ).toEqual([
          { product_id: "a", reserved: 5 },
          { product_id: "b", reserved: 1 },
          { product_id: "c", reserved: 0 }
        ])
        expect(yield* counterDrift(sql)).toEqual([])
      }).pipe(Effect.provide(PgClient.layer({ url, maxConnections: 1 })))
    }).pipe(Effect.scoped), 60_000)
})
