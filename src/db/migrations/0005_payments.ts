/** Payment attempts (recorded before the provider is called) and the built-in processor's charges. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payment_attempts (
      session_id       text NOT NULL,
      sequence         integer NOT NULL CHECK (sequence > 0),
      idempotency_key  text NOT NULL UNIQUE,
      amount           bigint NOT NULL CHECK (amount >= 0),
      currency         text NOT NULL,
      credential_ref   text NOT NULL,
      state            text NOT NULL CHECK (state IN ('pending', 'succeeded', 'declined')),
      charge_id        text,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      PRIMARY KEY (session_id, sequence)
    )`
  yield* sql`
    CREATE TABLE processor_charges (
      idempotency_key  text PRIMARY KEY,
      id               text NOT NULL UNIQUE,
      amount           bigint NOT NULL,
      currency         text NOT NULL,
      outcome          text NOT NULL CHECK (outcome IN ('approved', 'card_declined', 'insufficient_funds')),
      created_at       timestamptz NOT NULL
    )`
}) satisfies Migration
