/** The merchant console's sign-in sessions, by the SHA-256 of their cookie (the cookie is never stored). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE console_sessions (
      token_hash  text PRIMARY KEY,
      csrf_token  text NOT NULL,
      key_id      text NOT NULL,
      created_at  timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at)`
}) satisfies Migration
