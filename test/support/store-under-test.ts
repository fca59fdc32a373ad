/**
 * The checkout stores an HTTP suite runs against: in memory, SQL over embedded PGlite, and SQL
 * over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 *
 * Each test needs fresh state (the inventory tests assume the demo catalog's initial stock). A
 * fresh in-memory PGlite per test costs about a second even loaded from a migrated dump (a fresh
 * PostgreSQL database about 0.3 s), so the
 * SQL kinds open one migrated database per suite and empty every table at the start of each test;
 * the application then seeds the stock again, as it does at start. Tests in a file run one after
 * another, so no test sees another's rows.
 */
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlCartStore } from "../../src/carts/store/sql-cart-store.ts"
import { SqlProductStore } from "../../src/catalog/store/sql-product-store.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { make as makeSqlCheckoutStore, SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { SqlConsoleSessionStore } from "../../src/console/store/sql-console-session-store.ts"
import { SqlAuthenticationStore } from "../../src/delegate-authentication/store/sql-authentication-store.ts"
import { SqlVaultStore } from "../../src/delegate-payment/store/sql-vault-store.ts"
import { SqlFeedStore } from "../../src/feeds/store/sql-feed-store.ts"
import { SqlIdempotencyStore } from "../../src/idempotency/store/sql-idempotency-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import { SqlChargeStore } from "../../src/payments/store/sql-charge-store.ts"
import { SqlStripeEventsStore } from "../../src/stripe/store/sql-stripe-events-store.ts"
import { SqlStripePaymentStore } from "../../src/stripe/store/sql-stripe-payment-store.ts"
import { SqlReceivedEventsStore } from "../../src/webhook-receiver/store/sql-received-events-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { MemoryDatabase } from "../doubles/memory-database.ts"
import type { TestAppOptions } from "./http.ts"
import { memoryState } from "./memory-state.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "./test-database.ts"

export interface StoreUnderTest {
  readonly name: string
  /** False when the store needs something this run does not have (a PostgreSQL server). */
  readonly available: boolean
  /** Registers the suite's `beforeAll`/`afterAll` (opening and closing a shared database). */
  readonly register: () => void
  /** A store layer with empty state, for one test (in memory: on the memory database in context). */
  readonly fresh: Effect.Effect<Layer.Layer<CheckoutStore, never, MemoryDatabase>>
  /**
   * Every store of the application with empty state, for one test, sharing one database (in
   * memory: `testApp`'s defaults), so a completion's writes commit or roll back together as in
   * production.
   */
  readonly freshStores: Effect.Effect<
    Pick<
      TestAppOptions,
      | "store"
      | "vaultStore"
      | "chargeStore"
      | "stripeStore"
      | "orderStore"
      | "idempotencyStore"
      | "receivedEventsStore"
      | "authenticationStore"
      | "consoleSessionStore"
      | "stripeEventsStore"
      | "feedStore"
      | "productStore"
      | "cartStore"
    >
  >
  /**
   * How many rows `table` holds now (memory: the memory database in context). Only for tables
   * with one row per thing in both kinds: sessions, orders, tokens, charges, events.
   */
  readonly rowCount: (table: CountedTable) => Effect.Effect<number, never, MemoryDatabase>
  /**
   * Everything stored, as a value to compare with an earlier one: every table but the idempotency
   * keys (a 4xx to a keyed request is kept for replay by design) and the rate-limit buckets.
   */
  readonly state: Effect.Effect<unknown, never, MemoryDatabase>
}

export type CountedTable = "checkout_sessions" | "orders" | "vault_tokens" | "processor_charges" | "webhook_outbox"

/** Empties every table of the current schema except the migrations record. */
export const truncateAll = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema() AND tablename <> 'effect_sql_migrations'`
  if (tables.length === 0) return
  const list = tables.map((t) => `"${t.name.replaceAll("\"", "\"\"")}"`).join(", ")
  yield* sql.unsafe(`TRUNCATE ${list} RESTART IDENTITY CASCADE`)
}).pipe(Effect.orDie)

export const memoryStore: StoreUnderTest = {
  name: "memory",
  available: true,
  register: () => {},
  fresh: Effect.succeed(MemoryCheckoutStore),
  freshStores: Effect.succeed({}),
  rowCount: (table) => Effect.map(MemoryDatabase, (db) => [...db.table(table).values()].length),
  state: memoryState
}

/** Every row of every table but the bookkeeping ones, each table's rows as sorted JSON texts. */
const sqlState = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema()
      AND tablename NOT IN ('effect_sql_migrations', 'sql_functions', 'idempotency_keys', 'rate_limit_buckets')
    ORDER BY tablename`
  const state: Record<string, ReadonlyArray<string>> = {}
  for (const { name } of tables) {
    const rows = yield* sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql(name)} t`
    state[name] = rows.map((r) => r.row).sort()
  }
  return state
}).pipe(Effect.orDie)

const sharedSqlStore = (name: string, available: boolean, database: () => TestDatabase): StoreUnderTest => {
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown> | undefined
  return {
    name,
    available,
    register: () => {
      beforeAll(async () => {
        runtime = ManagedRuntime.make(database())
        await runtime.runtime()
      }, 120_000)
      afterAll(async () => {
        await runtime?.dispose()
      })
    },
    fresh: Effect.suspend(() => {
      if (runtime === undefined) return Effect.dieMessage(`${name}: the shared database is not open`)
      return Effect.promise(() => runtime!.runPromise(SqlClient.SqlClient)).pipe(
        Effect.map((sql) =>
          Layer.effect(CheckoutStore, Effect.zipRight(truncateAll, makeSqlCheckoutStore)).pipe(
            Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
          )
        )
      )
    }),
    freshStores: Effect.suspend(() => {
      if (runtime === undefined) return Effect.dieMessage(`${name}: the shared database is not open`)
      return Effect.promise(() => runtime!.runPromise(Effect.zipRight(truncateAll, SqlClient.SqlClient))).pipe(
        Effect.map((sql) => {
          const client = Layer.succeed(SqlClient.SqlClient, sql)
          return {
            store: Layer.provide(SqlCheckoutStore, client),
            vaultStore: Layer.provide(SqlVaultStore, client),
            chargeStore: Layer.provide(SqlChargeStore, client),
            stripeStore: Layer.provide(SqlStripePaymentStore, client),
            orderStore: Layer.provide(SqlOrderStore, client),
            idempotencyStore: Layer.provide(SqlIdempotencyStore, client),
            receivedEventsStore: Layer.provide(SqlReceivedEventsStore, client),
            authenticationStore: Layer.provide(SqlAuthenticationStore, client),
            consoleSessionStore: Layer.provide(SqlConsoleSessionStore, client),
            stripeEventsStore: Layer.provide(SqlStripeEventsStore, client),
            feedStore: Layer.provide(SqlFeedStore, client),
            productStore: Layer.provide(SqlProductStore, client),
            cartStore: Layer.provide(SqlCartStore, client)
          }
        })
      )
    }),
    rowCount: (table) =>
      Effect.suspend(() => {
        if (runtime === undefined) return Effect.dieMessage(`${name}: the shared database is not open`)
        return Effect.promise(() =>
          runtime!.runPromise(
            Effect.flatMap(
              SqlClient.SqlClient,
              (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`
            )
          )
        ).pipe(Effect.map((rows) => rows[0]?.n ?? 0))
      }),
    state: Effect.suspend(() => {
      if (runtime === undefined) return Effect.dieMessage(`${name}: the shared database is not open`)
      return Effect.promise(() => runtime!.runPromise(sqlState))
    })
  }
}

/** Memory, embedded PGlite (always) and PostgreSQL (when `TEST_DATABASE_URL` is set). */
export const storesUnderTest: ReadonlyArray<StoreUnderTest> = [
  memoryStore,
  sharedSqlStore("SQL on embedded PGlite", true, () => embeddedDatabase()),
  sharedSqlStore("SQL on PostgreSQL", hasPostgres, () => postgresDatabase())
]
