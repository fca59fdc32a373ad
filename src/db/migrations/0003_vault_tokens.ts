/** The delegate payment vault (CONTRACT §7): one row per `vt_` token, the card only as its AES-256-GCM envelope. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE vault_tokens (
      id                   text PRIMARY KEY,
      client_key_id        text NOT NULL,
      allowance_reason     text NOT NULL,
      max_amount           bigint NOT NULL CHECK (max_amount > 0),
      currency             text NOT NULL,
      checkout_session_id  text NOT NULL,
      merchant_id          text NOT NULL,
      expires_at           timestamptz NOT NULL,
      risk_signals         jsonb NOT NULL,
      metadata             jsonb NOT NULL,
      card_key_id          text NOT NULL,
      card_iv              bytea NOT NULL,
      card_ciphertext      bytea NOT NULL,
      card_tag             bytea NOT NULL,
      fingerprint          text NOT NULL,
      brand                text NOT NULL,
      last4                text NOT NULL,
      funding              text NOT NULL,
      state                text NOT NULL CHECK (state IN ('active', 'used')),
      created_at           timestamptz NOT NULL,
      used_at              timestamptz,
      used_by_session      text,
      CHECK ((state = 'used') = (used_at IS NOT NULL AND used_by_session IS NOT NULL))
    )`
  yield* sql`CREATE INDEX vault_tokens_fingerprint ON vault_tokens (fingerprint, created_at)`
  yield* sql`CREATE INDEX vault_tokens_checkout_session ON vault_tokens (checkout_session_id)`
}) satisfies Migration
