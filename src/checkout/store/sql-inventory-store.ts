/**
 * `InventoryStore` over SQL (`docs/concurrency.md`, "Stock accounting"). Every reservation write is
 * one PL/pgSQL call that keeps the counts exact, locking shards before stock rows, each kind in one
 * ascending pass; `lockStock` locks every row the transaction's reservation write then touches, so
 * transactions never deadlock on them. A session's reservations are written only under its lock
 * (or by its create).
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { STOCK_SHARDS } from "../../db/functions/stock-shards.ts"
import { iso } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import type { CheckoutStoreService, InventoryStore, StockLevel } from "../checkout-store.ts"
import type { Reservations } from "../session/session.ts"

/** As the two arrays (product ids, quantities) the functions take. */
export const reservationArrays = (reservations: Reservations) => {
  const wanted = [...reservations].filter(([, quantity]) => quantity > 0)
  return { products: wanted.map(([productId]) => productId), quantities: wanted.map(([, quantity]) => quantity) }
}

export const makeSqlInventoryStore = (
  sql: SqlClient.SqlClient,
  transaction: CheckoutStoreService["transaction"]
): InventoryStore => {
  const run = statementRunner(sql)
  const lockStock = Effect.fnUntraced(function*(productIds: ReadonlyArray<string>, now: number, forSession: string) {
    const ids = [...new Set(productIds)].sort()
    if (ids.length === 0) return new Map<string, number>() as ReadonlyMap<string, number>
    const rows = yield* run(sql<{ product_id: string; available: number }>`
        SELECT out_product AS product_id, out_available AS available
        FROM checkout_lock_stock(${ids}::text[], ${forSession}, ${iso(now)}::timestamptz)`)
    return new Map(rows.map((row) => [row.product_id, Number(row.available)])) as ReadonlyMap<string, number>
  })

  const setReservations = (sessionId: string, reservations: Reservations, expiresAt: number) => {
    const { products, quantities } = reservationArrays(reservations)
    return run(sql`
      SELECT checkout_set_reservations(${sessionId}, ${products}::text[], ${quantities}::int[],
                                       ${iso(expiresAt)}::timestamptz)`).pipe(Effect.asVoid)
  }

  const consumeReservations = (sessionId: string) =>
    run(sql`SELECT checkout_remove_reservations(${sessionId}, true)`).pipe(Effect.asVoid)

  const releaseReservations = (sessionId: string) =>
    run(sql`SELECT checkout_remove_reservations(${sessionId}, false)`).pipe(Effect.asVoid)

  /**
   * New stock rows start with the counter of the reservations already stored for them, the table
   * locked against writes (SHARE) so that none lands between the sum and the row.
   */
  const seedStock = Effect.fnUntraced(
    function*(products: ReadonlyArray<{ readonly id: string; readonly stock: number }>) {
      const rows = new Map<string, number>()
      for (const product of products) if (!rows.has(product.id)) rows.set(product.id, product.stock)
      if (rows.size === 0) return
      const stored = yield* run(sql<{ product_id: string }>`
        SELECT product_id FROM stock WHERE product_id = ANY (${[...rows.keys()]}::text[])`)
      for (const row of stored) rows.delete(row.product_id)
      if (rows.size === 0) return
      const missing = [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      yield* transaction(Effect.zipRight(
        run(sql`LOCK TABLE reservations IN SHARE MODE`),
        run(sql`
          WITH inserted AS (
            INSERT INTO stock (product_id, on_hand, reserved)
            SELECT v.product_id, v.on_hand,
                   COALESCE((SELECT SUM(r.quantity) FROM reservations r WHERE r.product_id = v.product_id), 0)
            FROM unnest(${missing.map(([id]) => id)}::text[], ${missing.map(([, stock]) => stock)}::int[])
              AS v (product_id, on_hand)
            ON CONFLICT (product_id) DO NOTHING
            RETURNING product_id
          )
          INSERT INTO stock_shards (product_id, shard, free)
          SELECT i.product_id, n.shard, 0
          FROM inserted i CROSS JOIN generate_series(0, ${STOCK_SHARDS - 1}) AS n (shard)
          ON CONFLICT (product_id, shard) DO NOTHING`)
      ))
    }
  )

  /** The stock rows' totals with their shards, less the expired reservations. */
  const stockLevels = (now: number) =>
    run(sql<{ product_id: string; on_hand: number; reserved: number }>`
      SELECT s.product_id, s.on_hand, s.reserved - COALESCE(e.expired, 0) AS reserved
      FROM stock_totals s
      LEFT JOIN (
        SELECT product_id, SUM(quantity)::int AS expired FROM reservations
        WHERE expires_at <= ${iso(now)}::timestamptz
        GROUP BY product_id
      ) e ON e.product_id = s.product_id
      ORDER BY s.product_id COLLATE "C"`).pipe(
      Effect.map((rows) =>
        rows.map((row): StockLevel => ({
          productId: row.product_id,
          onHand: Number(row.on_hand),
          reserved: Number(row.reserved)
        }))
      )
    )

  return { lockStock, setReservations, consumeReservations, releaseReservations, seedStock, stockLevels }
}
