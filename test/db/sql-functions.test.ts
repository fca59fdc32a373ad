/**
 * SQL functions defined once (`src/db/functions/`) and applied after the migrations: a fresh
 * database has every one; a database migrated by the earlier releases (functions created by their
 * migrations 0007–0012) upgrades in place; a changed body is applied once; an older version is
 * never put back over a newer one; and no body changes without its version.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { makeDatabaseLayer } from "../../src/db/database.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { applySqlFunctions, definitionHash, type SqlFunction, sqlFunctions } from "../../src/db/sql-functions.ts"
import { embeddedDatabase, freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const functionNames = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ proname: string }>`
      SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' ORDER BY p.proname`,
    (rows) => rows.map((row) => row.proname)
  )

/**
 * The text of each function's current version. A body changed without raising its version would
 * be applied over the other text of the same version by every process that starts, back and forth
 * between two releases: change the body, raise `version` in its file, then the pin here.
 */
const pinned: Record<string, { readonly version: number; readonly hash: string }> = {
  stock_shard_of: { version: 1, hash: "c5040ce96951d706b5b1c5dbd391a2312787c2f5cf2a88af5250eb73052fc5c7" },
  checkout_lock_stock: { version: 3, hash: "cbd59ca3a7285d07a76669044aadb45d7bc60f855be1dac3f318aa5f1b16f3dc" },
  checkout_set_reservations: { version: 2, hash: "766436e65a3b9de9ae9c9658a2515c885800b50c79a9523e80092a48b06f4c91" },
  checkout_remove_reservations: {
    version: 3,
    hash: "056c2ef10ab0c4776a1044a283e4dc6e495c6167311d0fab6e70addcbebe7fd7"
  },
  checkout_create_session: { version: 7, hash: "a2411f78b53b3b8fec5df84f1f0db27ed05dde41a97f44efd0b025b8445434c1" },
  checkout_session_for_payment: {
    version: 2,
    hash: "dacdec36ed9d2b4e5cca09c1d4b7c35a79f08e763667f47cf9bed1c920cd4035"
  },
  order_save_with_event: { version: 3, hash: "234a1fc9c173b48091cb1233d9ec2769fa49a696c986a9e033b11391cfda292c" },
  checkout_complete_paid: { version: 4, hash: "f0a68aa7e7319b5350bfbe085452c71743ee33f129192ebc7097174fb999af8b" },
  rate_limit_take_up_to: {
    version: 1,
    hash: "76c1e86bea470d1227fdb9c6addae381e1fafe5d9d72b56cc8ed019947d65675"
  },
  rate_limit_take: { version: 2, hash: "ead4790d2f1607232122316ba32770e0d460282ab8b2b8390e578e7a8208c4d3" },
  idempotency_store_answer: { version: 1, hash: "dc40e077347bded6e8f40f5b949b3bc7c7e9bd38cb97191b25a7857ad5c2b781" }
}

const probe = (version: number, body: string): SqlFunction => ({
  name: "acp_probe",
  version,
  definition: `CREATE OR REPLACE FUNCTION acp_probe() RETURNS text LANGUAGE sql AS $$ SELECT '${body}'::text $$`
})

const probeAnswer = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ answer: string }>`SELECT acp_probe() AS answer`, (rows) => rows[0]!.answer)

describe("SQL functions", () => {
  it("every function's text is the one pinned for its version", () => {
    const current = Object.fromEntries(
      sqlFunctions.map((fn) => [fn.name, { version: fn.version, hash: definitionHash(fn.definition) }])
    )
    expect(current).toEqual(pinned)
  })

  it.effect("a fresh database has every function, each recorded once with its version", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* functionNames(sql)).toEqual(sqlFunctions.map((fn) => fn.name).sort())
      const recorded = yield* sql<{ name: string; version: number }>`
        SELECT name, version FROM sql_functions ORDER BY name`
      expect(recorded).toEqual(
        sqlFunctions.map((fn) => ({ name: fn.name, version: fn.version })).sort((a, b) => a.name.localeCompare(b.name))
      )
      // Applying again changes nothing.
      expect(yield* applySqlFunctions()).toEqual([])
    }).pipe(Effect.provide(embeddedDatabase())))

  it.effect("a new version is applied once; an older version never goes back over it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* applySqlFunctions([probe(1, "first")])).toEqual(["acp_probe"])
      expect(yield* probeAnswer(sql)).toBe("first")
      expect(yield* applySqlFunctions([probe(1, "first")])).toEqual([])
      expect(yield* applySqlFunctions([probe(2, "second")])).toEqual(["acp_probe"])
      expect(yield* applySqlFunctions([probe(2, "second")])).toEqual([])
      expect(yield* probeAnswer(sql)).toBe("second")
      // The previous release, restarted after the newer one applied its body.
      expect(yield* applySqlFunctions([probe(1, "first")])).toEqual([])
      expect(yield* probeAnswer(sql)).toBe("second")
      // A migration dropped it (to change its signature): it is created again, whatever the record says.
      yield* sql`DROP FUNCTION acp_probe()`
      expect(yield* applySqlFunctions([probe(2, "second")])).toEqual(["acp_probe"])
      expect(yield* probeAnswer(sql)).toBe("second")
    }).pipe(Effect.provide(embeddedDatabase())))
})

describe.skipIf(!hasPostgres)("SQL functions on PostgreSQL", () => {
  it.live(
    "a database of the earlier releases upgrades in place: new migrations run, every function gets its current body",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* freshPostgresDatabaseUrl)
        // The earlier releases: migrations 0001–0012 applied (0008–0011 recorded by name), functions
        // created by those migrations, no `sql_functions` table.
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const earlier = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0013"))
          yield* Migrator.make({})({ loader: Migrator.fromRecord(earlier) })
          yield* sql`
          INSERT INTO effect_sql_migrations (migration_id, name) VALUES
            (8, 'create_session'), (9, 'lock_session_for_payment'), (10, 'add_back_by_index'), (11, 'complete_paid')`
          for (const fn of sqlFunctions) yield* sql.unsafe(fn.definition)
          // An earlier body of one function, to see it replaced.
          yield* sql.unsafe(`
          CREATE OR REPLACE FUNCTION checkout_lock_stock(p_products text[], p_session text, p_now timestamptz)
          RETURNS TABLE (out_product text, out_available integer) LANGUAGE sql AS $$ SELECT 'old', -1 $$`)
          // The earlier results of the two functions migration 0014 drops (with the earlier
          // signatures, which migration 0020 drops in turn).
          yield* sql.unsafe(`
          CREATE FUNCTION checkout_create_session(
            p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
            p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
            p_now timestamptz
          ) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{"inserted": false}'::jsonb $$`)
          // The signatures taking an order's and an event's document as jsonb, which 0021 drops.
          yield* sql.unsafe(`
          CREATE FUNCTION order_save_with_event(
            p_order_id text, p_session text, p_order_data jsonb, p_order_created_at timestamptz,
            p_event_id text, p_event_type text, p_event_payload jsonb, p_now timestamptz
          ) RETURNS integer LANGUAGE sql AS $$ SELECT NULL::integer $$`)
          yield* sql.unsafe(`
          CREATE FUNCTION checkout_complete_paid(
            p_session text, p_version bigint, p_status text, p_data json, p_internal json, p_expires_at timestamptz,
            p_updated_at timestamptz, p_sequence integer, p_charge_id text, p_paid_at timestamptz,
            p_order_id text, p_order_session text, p_order_data jsonb, p_order_created_at timestamptz,
            p_event_id text, p_event_type text, p_event_payload jsonb, p_now timestamptz
          ) RETURNS integer LANGUAGE sql AS $$ SELECT NULL::integer $$`)
          yield* sql.unsafe(`
          CREATE FUNCTION checkout_lock_session_for_payment(p_session text)
          RETURNS TABLE (out_data jsonb, out_attempt jsonb, out_coupon_holds text[])
          LANGUAGE sql AS $$ SELECT NULL::jsonb, NULL::jsonb, NULL::text[] $$`)
        }).pipe(Effect.provide(PgClient.layer({ url, maxConnections: 1 })))

        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const applied = yield* sql<
            { migration_id: number }
          >`SELECT migration_id FROM effect_sql_migrations ORDER BY 1`
          const ids = Object.keys(migrations).map((key) => Number(key.slice(0, 4)))
          expect(applied.map((row) => row.migration_id)).toEqual([...ids, 8, 9, 10, 11].sort((a, b) => a - b))
          expect(yield* functionNames(sql)).toEqual(sqlFunctions.map((fn) => fn.name).sort())
          yield* sql`INSERT INTO stock (product_id, on_hand) VALUES ('p', 3)`
          const available = yield* sql<{ out_product: string; out_available: number }>`
          SELECT * FROM checkout_lock_stock(ARRAY['p'], 'cs_x', now())`
          expect(available).toEqual([{ out_product: "p", out_available: 3 }])
        }).pipe(
          Effect.provide(
            makeDatabaseLayer({ kind: "postgres", url, poolSize: 2, source: "TEST_DATABASE_URL" }).pipe(Layer.orDie)
          )
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
