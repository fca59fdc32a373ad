/**
 * A product's stock spread over shards (`stock_shards`), so that the checkouts of one product in
 * demand do not all write its stock row: a create takes its units from the shard its session id
 * falls in (`checkout_create_session`), and releasing a session's reservations gives them back to
 * that shard (`checkout_remove_reservations`); the stock row is written only when a shard borrows
 * free units from it, when `checkout_lock_stock` takes the shards' units back, and when a
 * completion consumes units (there, so that on hand can never go below zero).
 *
 * What the columns mean from here on, per product: `stock.on_hand` is the units on hand;
 * `stock.reserved − Σ free` is the sum of the quantities of all the product's `reservations` rows,
 * expired or not (free: units lent to or released into a shard, free to take there); so
 * `stock.on_hand − stock.reserved` stays the units free at the stock row. `stock_totals` gives on
 * hand and the reserved units.
 * Every product with a stock row gets all its shards here (and `seedStock`, `checkout_lock_stock`
 * create those of new ones). No foreign key to `stock`: its check would lock the stock row (KEY
 * SHARE) on every insert of a shard, the very row this table keeps checkouts away from. Stock rows
 * are never deleted.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { STOCK_SHARDS } from "../functions/stock-shards.ts"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE stock_shards (
      product_id  text NOT NULL,
      shard       smallint NOT NULL,
      free        integer NOT NULL CHECK (free >= 0),
      PRIMARY KEY (product_id, shard)
    )`
  yield* sql`
    INSERT INTO stock_shards (product_id, shard, free)
    SELECT s.product_id, n.shard, 0
    FROM stock s CROSS JOIN generate_series(0, ${STOCK_SHARDS - 1}) AS n (shard)`
  yield* sql`
    CREATE VIEW stock_totals AS
    SELECT s.product_id, s.on_hand, s.reserved - COALESCE(h.free, 0) AS reserved
    FROM stock s
    LEFT JOIN (SELECT product_id, SUM(free)::integer AS free FROM stock_shards GROUP BY product_id) h
      ON h.product_id = s.product_id`
}) satisfies Migration
