/**
 * Shards per product (a power of two: `stock_shard_of` masks the session id's hash with it less one) and
 * the units a lacking shard borrows beyond its need (`docs/concurrency.md#stock-accounting`).
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
