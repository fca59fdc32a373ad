/**
 * Stock spread over shards, so that checkouts of one product do not all write its stock row; from here on
 * `stock.reserved − Σ free` is the sum of its reservations (`docs/concurrency.md#stock-accounting`). No
 * foreign key to `stock`: its check would lock the stock row on every shard insert.
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
