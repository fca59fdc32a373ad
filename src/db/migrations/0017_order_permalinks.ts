/** Orders found by their permalink token (`src/orders/model/order-permalink.ts`); older orders get one. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomInt } from "node:crypto"
import type { Migration } from "./migration.ts"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

const newToken = () => Array.from({ length: 22 }, () => ALPHABET[randomInt(62)]).join("")

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE orders ADD COLUMN permalink_token text
      GENERATED ALWAYS AS (substring(data->>'permalink_url' from '/order-status/([0-9A-Za-z]{22})$')) STORED`
  yield* sql`CREATE UNIQUE INDEX orders_permalink_token ON orders (permalink_token)`
  const old = yield* sql<{ id: string; checkout_session_id: string; url: string }>`
    SELECT id, checkout_session_id, data->>'permalink_url' AS url FROM orders WHERE permalink_token IS NULL`
  for (const order of old) {
    const url = order.url.replace(/\/orders\/[^/]*$/, "") + `/order-status/${newToken()}`
    yield* sql`
      UPDATE orders SET data = jsonb_set(data, '{permalink_url}', to_jsonb(${url}::text)) WHERE id = ${order.id}`
    yield* sql`
      UPDATE checkout_sessions SET data = jsonb_set(data, '{order,permalink_url}', to_jsonb(${url}::text))
      WHERE id = ${order.checkout_session_id} AND data ? 'order'`
  }
}) satisfies Migration
