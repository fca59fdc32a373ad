/**
 * Free units lent by a product's stock row to its shards, so that creates of one product in demand
 * do not all write one row: a create takes its units from the shard its session id falls in
 * (`checkout_create_session`), and touches the stock row only to borrow more. From here on,
 * `stock.reserved` counts every unit that is not free at the stock row: the quantities of all the
 * product's `reservations` rows plus the `free` of its shards (none yet, so the counter is exact as
 * it stands). `checkout_lock_stock` takes the shards' units back before it computes what is
 * available, so the exact availability never misses units parked in a shard.
 *
 * No foreign key to `stock`: its check would lock the stock row (KEY SHARE) on every insert of a
 * shard, the very row this table keeps creates away from. Stock rows are never deleted.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
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
}) satisfies Migration
