/**
 * Migration 0007 adds the reserved-units counter (`stock.reserved`) and backfills it from the
 * reservations already stored: live and expired ones alike, none for a product without a stock
 * row. Needs TEST_DATABASE_URL.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { migrations } from "../../src/db/migrations/index.ts"
import { freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"
import { counterDrift } from "./reservation-counter-fixtures.ts"

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
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
