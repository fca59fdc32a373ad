/**
 * How a product's stock is spread for checkouts (`stock_shards`, migration 0019): the number of
 * shards, a power of two because a session's shard is its id's hash masked by it less one
 * (`stock_shard_of`, the one definition every function and the sweep use), and how many units a
 * shard borrows from the stock row beyond what the create that lacks them takes. More shards keep
 * more concurrent checkouts of one product apart; more lent units make the stock row's writes
 * rarer. Both bound the units parked in shards, which `checkout_lock_stock` takes back whenever
 * the exact availability is needed.
 */
import type { SqlFunction } from "./sql-function.ts"

export const STOCK_SHARDS = 64
export const STOCK_LEND = 64

export const stockShardOf: SqlFunction = {
  name: "stock_shard_of",
  version: 1,
  definition: `
  CREATE OR REPLACE FUNCTION stock_shard_of(p_session text) RETURNS smallint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT (hashtext(p_session) & ${STOCK_SHARDS - 1})::smallint
  $fn$
`
}
