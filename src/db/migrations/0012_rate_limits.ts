/** Token buckets shared by every process (CONTRACT §1); times in epoch ms; the sweep deletes rows past `full_at`. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_limit_buckets (
      bucket_key  text PRIMARY KEY,
      tokens      double precision NOT NULL,
      updated_at  bigint NOT NULL,
      full_at     bigint NOT NULL
    )`
  yield* sql`CREATE INDEX rate_limit_buckets_full_at ON rate_limit_buckets (full_at)`
}) satisfies Migration
