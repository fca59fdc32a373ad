/**
 * What the tests of the reserved-units counter (`stock.reserved`, migration 0007) share: a seeded
 * PRNG, independent checks of the counter on the SQL tables, and the stock levels a store reports.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"

/** A small deterministic PRNG (mulberry32), so that a failing sequence can be replayed. */
export const random = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <A>(values: ReadonlyArray<A>): A => values[Math.floor(next() * values.length)]!
  }
}

// ---------------------------------------------------------------------------------------------
// Independent checks on the SQL tables

/**
 * Products whose reserved units (the stock row's counter with its shards, `stock_totals`) differ
 * from the sum of all their reservation rows.
 */
export const counterDrift = (sql: SqlClient.SqlClient, productIds?: ReadonlyArray<string>) =>
  sql<{ product_id: string; reserved: number; total: number }>`
    SELECT s.product_id, s.reserved, COALESCE(r.total, 0)::int AS total
    FROM stock_totals s
    LEFT JOIN (SELECT product_id, SUM(quantity) AS total FROM reservations GROUP BY product_id) r
      ON r.product_id = s.product_id
    WHERE s.reserved <> COALESCE(r.total, 0)
      ${productIds === undefined ? sql`` : sql`AND s.product_id = ANY (${[...productIds]}::text[])`}`.pipe(
    Effect.orDie
  )

/** On hand and live reservations per product, summed from the rows (not from the counter). */
const summedLevels = (sql: SqlClient.SqlClient, now: number) =>
  sql<{ product_id: string; on_hand: number; reserved: number }>`
    SELECT s.product_id, s.on_hand,
           COALESCE(SUM(r.quantity) FILTER (WHERE r.expires_at > ${new Date(now).toISOString()}::timestamptz), 0)::int
             AS reserved
    FROM stock_totals s LEFT JOIN reservations r ON r.product_id = s.product_id
    GROUP BY s.product_id, s.on_hand
    ORDER BY s.product_id COLLATE "C"`.pipe(
    Effect.orDie,
    Effect.map((rows) =>
      rows.map((row) => ({ productId: row.product_id, onHand: Number(row.on_hand), reserved: Number(row.reserved) }))
    )
  )

/** On SQL stores: the counter is exact and `stockLevels` agrees with the summed rows. */
export const checkSqlInvariants = (now: number, productIds?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    if (Option.isNone(sql)) return
    expect(yield* counterDrift(sql.value, productIds)).toEqual([])
    const store = yield* CheckoutStore
    const keep = <A extends { readonly productId: string }>(levels: ReadonlyArray<A>) =>
      productIds === undefined ? levels : levels.filter((level) => productIds.includes(level.productId))
    expect(keep(yield* store.inventory.stockLevels(now))).toEqual(keep(yield* summedLevels(sql.value, now)))
  })

/** The stock levels `stockLevels(now)` reports for `productIds`. */
export const storeLevels = (productIds: ReadonlyArray<string>, now: number) =>
  Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(now)).pipe(
    Effect.map((levels) => levels.filter((level) => productIds.includes(level.productId)))
  )
