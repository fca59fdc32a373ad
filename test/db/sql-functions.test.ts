/**
 * SQL functions defined once (`src/db/functions/`) and applied after the migrations: a fresh
 * database has every one; a database migrated by the earlier releases (functions created by their
 * migrations 0007–0012) upgrades in place; a changed body is applied once; an older build never
 * puts back its body over a newer build's.
 */
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { makeDatabaseLayer } from "../../src/db/database.ts"
import { latestMigrationId, migrations } from "../../src/db/migrations/index.ts"
import { applySqlFunctions, type SqlFunction, sqlFunctions } from "../../src/db/sql-functions.ts"
import { embeddedDatabase, freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const functionNames = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ proname: string }>`
      SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' ORDER BY p.proname`,
    (rows) => rows.map((row) => row.proname)
  )

const probe = (body: string): SqlFunction => ({
  name: "acp_probe",
  definition: `CREATE OR REPLACE FUNCTION acp_probe() RETURNS text LANGUAGE sql AS $$ SELECT '${body}'::text $$`
})

const probeAnswer = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ answer: string }>`SELECT acp_probe() AS answer`, (rows) => rows[0]!.answer)

describe("SQL functions", () => {
  it.effect("a fresh database has every function, each recorded once with this build's migration", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* functionNames(sql)).toEqual(sqlFunctions.map((fn) => fn.name).sort())
      const recorded = yield* sql<{ name: string; migration_id: number }>`
        SELECT name, migration_id FROM sql_functions ORDER BY name`
      expect(recorded).toEqual(
        sqlFunctions.map((fn) => ({ name: fn.name, migration_id: latestMigrationId })).sort((a, b) =>
          a.name.localeCompare(b.name)
        )
      )
      // Applying again changes nothing.
      expect(yield* applySqlFunctions(latestMigrationId)).toEqual([])
    }).pipe(Effect.provide(embeddedDatabase())))

  it.effect("a changed body is applied once; a build older than the recorded one leaves it alone", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* applySqlFunctions(latestMigrationId, [probe("first")])).toEqual(["acp_probe"])
      expect(yield* probeAnswer(sql)).toBe("first")
      expect(yield* applySqlFunctions(latestMigrationId, [probe("first")])).toEqual([])
      expect(yield* applySqlFunctions(latestMigrationId + 1, [probe("newer")])).toEqual(["acp_probe"])
      expect(yield* probeAnswer(sql)).toBe("newer")
      // The previous release, restarted after the newer one applied its body.
      expect(yield* applySqlFunctions(latestMigrationId, [probe("older")])).toEqual([])
      expect(yield* probeAnswer(sql)).toBe("newer")
    }).pipe(Effect.provide(embeddedDatabase())))
})

describe.skipIf(!hasPostgres)("SQL functions on PostgreSQL", () => {
  it.live("a database of the earlier releases upgrades in place: new migrations run, every function gets its current body", () =>
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
        // The earlier results of the two functions migration 0014 drops.
        yield* sql.unsafe(`
          DROP FUNCTION checkout_create_session(
            text, text, jsonb, timestamptz, timestamptz, timestamptz, text[], integer[], timestamptz, timestamptz)`)
        yield* sql.unsafe(`
          CREATE FUNCTION checkout_create_session(
            p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
            p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
            p_now timestamptz
          ) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{"inserted": false}'::jsonb $$`)
        yield* sql.unsafe(`DROP FUNCTION checkout_lock_session_for_payment(text)`)
        yield* sql.unsafe(`
          CREATE FUNCTION checkout_lock_session_for_payment(p_session text)
          RETURNS TABLE (out_data jsonb, out_attempt jsonb, out_coupon_holds text[])
          LANGUAGE sql AS $$ SELECT NULL::jsonb, NULL::jsonb, NULL::text[] $$`)
      }).pipe(Effect.provide(PgClient.layer({ url, maxConnections: 1 })))

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const applied = yield* sql<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations ORDER BY 1`
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
    }).pipe(Effect.scoped), 60_000)
})
