/** `stock.reserved`, the units reserved per product, backfilled with `reservations` locked against writes. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`LOCK TABLE reservations IN SHARE MODE`
  yield* sql`ALTER TABLE stock ADD COLUMN reserved integer NOT NULL DEFAULT 0 CHECK (reserved >= 0)`
  yield* sql`
    UPDATE stock s SET reserved = r.total
    FROM (SELECT product_id, SUM(quantity)::int AS total FROM reservations GROUP BY product_id) r
    WHERE s.product_id = r.product_id`
}) satisfies Migration
