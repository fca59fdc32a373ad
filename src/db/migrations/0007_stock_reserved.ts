/**
 * The reserved units per product, kept on the stock row so that a create need not sum the
 * reservations of every open session: `stock.reserved` = the sum of the quantities of *all* the
 * product's rows in `reservations`, expired or not, backfilled here with `reservations` locked
 * against writes. Every later write to `reservations` goes through the functions of
 * `../functions/` that keep the counter exact in the same call. (Processes of an earlier version
 * write reservations without it: stop them before this runs.)
 */
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
