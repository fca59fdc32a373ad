/** The hosted Feed API (`src/feeds/feed-store.ts`): feeds and their products; 0026–0029 are the catalog's. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE feeds (
      id              text PRIMARY KEY,
      owner_key_id    text NOT NULL,
      target_country  text,
      created_at      timestamptz NOT NULL,
      updated_at      timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE feed_products (
      feed_id     text NOT NULL REFERENCES feeds (id) ON DELETE CASCADE,
      product_id  text NOT NULL,
      product     json NOT NULL,
      updated_at  timestamptz NOT NULL,
      position    bigserial NOT NULL,
      PRIMARY KEY (feed_id, product_id)
    )`
  yield* sql`CREATE INDEX feed_products_order ON feed_products (feed_id, position)`
}) satisfies Migration
