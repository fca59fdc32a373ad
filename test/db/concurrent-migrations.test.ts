/**
 * Several processes starting at once on a fresh PostgreSQL database: every one of them migrates
 * (or finds the migrations applied) without failing. Needs TEST_DATABASE_URL.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { makeDatabaseLayer } from "../../src/db/database.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

describe.skipIf(!hasPostgres)("migrations on PostgreSQL", () => {
  it.live(
    "eight database layers opened at the same time on a fresh database all succeed, migrating once",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* freshPostgresDatabaseUrl)
        const applied = yield* Effect.all(
          Array.from({ length: 8 }, () =>
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql<{ name: string }>`SELECT name FROM effect_sql_migrations`)
              .pipe(
                Effect.provide(makeDatabaseLayer({ kind: "postgres", url, poolSize: 2 }))
              )),
          { concurrency: "unbounded" }
        )
        const expected = Object.keys(migrations).map((key) =>
          key.replace(/^\d+_/, "")
        )
        for (const rows of applied) {
          expect(rows.map((row) => row.name)).toEqual(expected)
        }
      }).pipe(Effect.scoped),
    60_000
  )
})
