/**
 * Details of the SQL checkout store beyond the contract every store meets (on embedded PGlite, and
 * on PostgreSQL when TEST_DATABASE_URL is set): a stored session that is not what the store writes
 * fails with StorageError; a stock row seeded after reservations of its product starts with their
 * sum. PostgreSQL only: `lockStock` after waiting on a row lock sees what the other transaction
 * committed; a stock row without shards (made by SQL) is counted at the row until `lockStock`
 * makes them.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { STOCK_SHARDS } from "../../src/db/functions/stock-shards.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "../support/test-database.ts"
import { makeSession, uid } from "./checkout-store-fixtures.ts"
import { checkSqlInvariants, storeLevels } from "./reservation-counter-fixtures.ts"

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
              INSERT INTO checkout_sessions (id, status, data, internal, expires_at)
              VALUES (${id}, 'ready_for_payment', ${JSON.stringify(data)}::json, '{"items": []}', now())`.pipe(
              Effect.orDie
            )
            const read = yield* Effect.flip(store.sessions.get(id))
            expect(read).toBeInstanceOf(StorageError)
            expect(read.reason).toBe("failure")
            const locked = yield* Effect.flip(store.transaction(store.sessions.lock(id)))
            expect(locked).toBeInstanceOf(StorageError)
            expect(locked.reason).toBe("failure")
          }
          // A wire form as written, with internal fields that are not an object.
          for (const internal of ["[]", "\"items\"", "null"]) {
            const id = uid("cs")
            yield* sql`
              INSERT INTO checkout_sessions (id, status, data, internal, expires_at)
              VALUES (${id}, 'ready_for_payment', ${JSON.stringify({ id, status: "ready_for_payment" })}::json,
                      ${internal}::json, now())`.pipe(Effect.orDie)
            const read = yield* Effect.flip(store.sessions.get(id))
            expect(read).toBeInstanceOf(StorageError)
            expect(read.reason).toBe("failure")
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
})
