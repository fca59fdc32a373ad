/**
 * How a product's free units are spread for creates (`stock_shards`, migration 0019): the number
 * of shards, a power of two because a session's shard is its id's hash masked by it less one, and
 * how many units a shard borrows from the stock row beyond what the create that lacks them takes.
 * More shards keep more concurrent creates of one product apart; more lent units make the stock
 * row's writes rarer. Both bound the units parked in shards, which `checkout_lock_stock` takes back
 * whenever the exact availability is needed.
 */
export const STOCK_SHARDS = 64
export const STOCK_LEND = 64
