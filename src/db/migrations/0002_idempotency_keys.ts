/** Idempotency keys (CONTRACT §6): the primary key makes a claim atomic across processes. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      key_id           text NOT NULL,
      method           text NOT NULL,
      path             text NOT NULL,
      idempotency_key  text NOT NULL,
      fingerprint      text NOT NULL,
      state            text NOT NULL CHECK (state IN ('in_flight', 'completed')),
      claim_id         text NOT NULL,
      status           integer,
      headers          jsonb,
      body             bytea,
      created_at       timestamptz NOT NULL,
      expires_at       timestamptz NOT NULL,
      lease_until      timestamptz,
      PRIMARY KEY (key_id, method, path, idempotency_key),
      CHECK (state = 'in_flight' OR (status IS NOT NULL AND headers IS NOT NULL AND body IS NOT NULL))
    )`
  yield* sql`CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)`
}) satisfies Migration
