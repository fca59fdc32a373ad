/**
 * `CartStore` over PostgreSQL (`carts`, migration 0040). Each operation is one statement, so concurrent
 * replacements of one cart serialize on its row and the last to commit wins. Items and buyer are JSON text.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { Item } from "../../catalog/model/line-items.ts"
import { iso, millis } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { CartStore, type CartStoreService } from "../cart-store.ts"
import type { Cart, JsonObject } from "../model/cart.ts"

interface Row {
  readonly id: string
  readonly items: string
  readonly buyer: string | null
  readonly locale: string | null
  readonly handoff_token: string
  readonly checkouts: number | string
  readonly created_ms: number | string
  readonly updated_ms: number | string
  readonly expires_ms: number | string
}

const fromRow = (row: Row): Cart => ({
  id: row.id,
  items: JSON.parse(row.items) as ReadonlyArray<Item>,
  buyer: row.buyer === null ? undefined : JSON.parse(row.buyer) as JsonObject,
  locale: row.locale ?? undefined,
  handoffToken: row.handoff_token,
  checkouts: Number(row.checkouts),
  createdAt: millis(row.created_ms),
  updatedAt: millis(row.updated_ms),
  expiresAt: millis(row.expires_ms)
})

const firstCart = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullable(rows[0]), fromRow)

export const make: Effect.Effect<CartStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)
  const columns = sql.literal(`id, items, buyer, locale, handoff_token, checkouts,
    (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
    (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms,
    (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms`)
  const buyerText = (buyer: JsonObject | undefined) => buyer === undefined ? null : JSON.stringify(buyer)

  return CartStore.of({
    insert: (cart) =>
      run(sql`
        INSERT INTO carts (id, items, buyer, locale, handoff_token, checkouts, created_at, updated_at, expires_at)
        VALUES (${cart.id}, ${JSON.stringify(cart.items)}, ${buyerText(cart.buyer)}, ${cart.locale ?? null},
                ${cart.handoffToken}, ${cart.checkouts}, ${iso(cart.createdAt)}::timestamptz,
                ${iso(cart.updatedAt)}::timestamptz, ${iso(cart.expiresAt)}::timestamptz)`).pipe(Effect.asVoid),
    find: (id, now) =>
      run(sql<Row>`
        SELECT ${columns} FROM carts WHERE id = ${id} AND expires_at > ${iso(now)}::timestamptz`).pipe(
        Effect.map(firstCart)
      ),
    findByHandoff: (handoffToken, now) =>
      run(sql<Row>`
        SELECT ${columns} FROM carts
        WHERE handoff_token = ${handoffToken} AND expires_at > ${iso(now)}::timestamptz`).pipe(Effect.map(firstCart)),
    replace: (id, replacement, now) =>
      run(sql<Row>`
        UPDATE carts SET items = ${JSON.stringify(replacement.items)}, buyer = ${buyerText(replacement.buyer)},
                         updated_at = ${iso(replacement.updatedAt)}::timestamptz,
                         expires_at = ${iso(replacement.expiresAt)}::timestamptz
        WHERE id = ${id} AND expires_at > ${iso(now)}::timestamptz
        RETURNING ${columns}`).pipe(Effect.map(firstCart)),
    remove: (id, now) =>
      run(sql<Row>`
        DELETE FROM carts WHERE id = ${id} AND expires_at > ${iso(now)}::timestamptz
        RETURNING ${columns}`).pipe(Effect.map(firstCart)),
    countCheckout: (id, now) =>
      run(sql<{ id: string }>`
        UPDATE carts SET checkouts = checkouts + 1
        WHERE id = ${id} AND expires_at > ${iso(now)}::timestamptz
        RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
    list: (now, limit) =>
      run(sql<Row>`
        SELECT ${columns} FROM carts WHERE expires_at > ${iso(now)}::timestamptz
        ORDER BY updated_at DESC, id LIMIT ${limit}`).pipe(Effect.map((rows) => rows.map(fromRow))),
    counts: (now) =>
      run(sql<{ carts: number | string; with_checkout: number | string }>`
        SELECT count(*)::int AS carts, count(*) FILTER (WHERE checkouts > 0)::int AS with_checkout
        FROM carts WHERE expires_at > ${iso(now)}::timestamptz`).pipe(
        Effect.map((rows) => ({
          carts: Number(rows[0]?.carts ?? 0),
          withCheckout: Number(rows[0]?.with_checkout ?? 0)
        }))
      ),
    removeExpired: (now, limit) =>
      run(sql<{ removed: number | string }>`
        WITH due AS (
          SELECT id FROM carts WHERE expires_at <= ${iso(now)}::timestamptz
          ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
        ), removed AS (
          DELETE FROM carts WHERE id IN (SELECT id FROM due) RETURNING 1
        )
        SELECT count(*)::int AS removed FROM removed`).pipe(Effect.map((rows) => Number(rows[0]?.removed ?? 0)))
  })
})

export const SqlCartStore: Layer.Layer<CartStore, never, SqlClient.SqlClient> = Layer.effect(CartStore, make)
