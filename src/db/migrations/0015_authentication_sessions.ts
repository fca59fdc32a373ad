/** Issuer authentication sessions (built-in 3-D Secure); `data` holds no card number. */
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
