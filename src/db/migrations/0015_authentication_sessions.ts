/**
 * Issuer authentication sessions of the Delegate Authentication API (the built-in 3-D Secure
 * provider). The session is `data` (JSON, no card number: a keyed fingerprint, brand and last 4);
 * the columns beside it are what lookups and compare-and-set steps read.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE authentication_sessions (
      id               text PRIMARY KEY,
      ds_trans_id      text NOT NULL UNIQUE,
      status           text NOT NULL,
      action           text,
      used_by_session  text,
      expires_at       timestamptz NOT NULL,
      data             jsonb NOT NULL
    )`
}) satisfies Migration
