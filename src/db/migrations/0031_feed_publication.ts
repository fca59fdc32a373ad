/** Publishing the merchant's products to an agent-hosted Feed API (`src/feeds/feed-publication-store.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE feed_publications (
      api_url         text PRIMARY KEY,
      feed_id         text,
      target_country  text,
      claimed_at      timestamptz NOT NULL,
      created_at      timestamptz
    )`
  yield* sql`
    CREATE TABLE feed_push_states (
      api_url          text NOT NULL,
      product_id       text NOT NULL,
      pushed_hash      text,
      pushed_at        timestamptz,
      attempts         integer NOT NULL DEFAULT 0,
      next_attempt_at  timestamptz,
      last_error       text,
      dead_at          timestamptz,
      locked_until     timestamptz,
      PRIMARY KEY (api_url, product_id)
    )`
}) satisfies Migration
