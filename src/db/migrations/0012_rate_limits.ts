/**
 * Rate limits shared by every process (CONTRACT §1: invariants hold across processes; §7 and the
 * receiver: per API key, per source). One row per token bucket: tokens left as of `updated_at`
 * (the processes' clock, Unix ms) and when it will be full again (`full_at`: then the row means
 * nothing and the sweep deletes it). Written by `rate_limit_take_up_to` (`../functions/`).
 */
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
