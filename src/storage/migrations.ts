/**
 * Versioned database migrations, applied in key order by `Migrator` (recorded in the
 * `effect_sql_migrations` table, each run at most once, under a table lock so several processes
 * may start at the same time).
 *
 * To add a migration, append one entry `"000N_name": Effect…` to `migrations`; never edit or
 * renumber one that has shipped.
 */
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Effect } from "effect"

type Migration = Effect.Effect<void, unknown, SqlClient.SqlClient>

const m0001_checkout: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE checkout_sessions (
      id          text PRIMARY KEY,
      status      text NOT NULL,
      data        jsonb NOT NULL,
      expires_at  timestamptz NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      updated_at  timestamptz NOT NULL DEFAULT now(),
      version     integer NOT NULL DEFAULT 1
    )`
  // The expiry sweep reads only active sessions, oldest deadline first.
  yield* sql`
    CREATE INDEX checkout_sessions_active_expires_at ON checkout_sessions (expires_at)
    WHERE status IN ('not_ready_for_payment', 'ready_for_payment', 'authentication_required')`
  yield* sql`
    CREATE TABLE stock (
      product_id  text PRIMARY KEY,
      on_hand     integer NOT NULL CHECK (on_hand >= 0)
    )`
  yield* sql`
    CREATE TABLE reservations (
      session_id  text NOT NULL,
      product_id  text NOT NULL,
      quantity    integer NOT NULL CHECK (quantity > 0),
      expires_at  timestamptz NOT NULL,
      PRIMARY KEY (session_id, product_id)
    )`
  yield* sql`CREATE INDEX reservations_product_expires_at ON reservations (product_id, expires_at)`
  yield* sql`
    CREATE TABLE orders (
      id                   text PRIMARY KEY,
      checkout_session_id  text NOT NULL UNIQUE,
      data                 jsonb NOT NULL,
      created_at           timestamptz NOT NULL DEFAULT now()
    )`
})

/**
 * Idempotency keys (CONTRACT §6): one row per (API key id, method, path, key). The primary key is
 * what makes the claim atomic across processes (`INSERT … ON CONFLICT`). Only the fingerprint of
 * the request body is kept, never the body; the stored response is replayed as is.
 */
const m0002_idempotency_keys: Migration = Effect.gen(function*() {
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
  // The clean-up job deletes expired keys, oldest first, in batches.
  yield* sql`CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)`
})

/**
 * The delegate payment vault (CONTRACT §7): one row per `vt_` token. The card is only the
 * AES-256-GCM envelope (key id, IV, ciphertext, tag as bytea); in clear only brand, last 4,
 * funding type and the keyed fingerprint. `state` goes `active` → `used` once.
 */
const m0003_vault_tokens: Migration = Effect.gen(function*() {
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
})

/**
 * Order events (CONTRACT §8). `webhook_outbox`: the sender's transactional outbox, one row per
 * event, written in the transaction of the order change; `sequence` numbers the events of one
 * order (delivery follows it); `locked_until` is the lease of the worker delivering it.
 * `received_events` / `received_orders`: the receiver's log of every accepted event (deduplicated
 * by Request-Id and by body hash) and the latest state per order.
 */
const m0004_orders_outbox: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_outbox (
      id                text PRIMARY KEY,
      order_id          text NOT NULL,
      sequence          integer NOT NULL CHECK (sequence >= 1),
      type              text NOT NULL,
      payload           jsonb NOT NULL,
      state             text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
      attempts          integer NOT NULL DEFAULT 0,
      next_attempt_at   timestamptz NOT NULL,
      locked_until      timestamptz,
      first_attempt_at  timestamptz,
      last_error        text,
      last_status       integer,
      created_at        timestamptz NOT NULL,
      delivered_at      timestamptz,
      UNIQUE (order_id, sequence)
    )`
  // The worker reads pending events by due time, and checks for earlier pending events per order.
  yield* sql`CREATE INDEX webhook_outbox_pending_due ON webhook_outbox (next_attempt_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_outbox_pending_order ON webhook_outbox (order_id, sequence) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_outbox_state_created ON webhook_outbox (state, created_at)`
  yield* sql`
    CREATE TABLE received_events (
      request_id   text PRIMARY KEY,
      body_hash    text NOT NULL UNIQUE,
      order_id     text NOT NULL,
      type         text NOT NULL,
      status       text NOT NULL,
      payload      jsonb NOT NULL,
      received_at  timestamptz NOT NULL,
      receipt      bigserial NOT NULL
    )`
  yield* sql`CREATE INDEX received_events_order ON received_events (order_id, receipt)`
  yield* sql`
    CREATE TABLE received_orders (
      order_id         text PRIMARY KEY,
      status           text NOT NULL,
      last_request_id  text NOT NULL,
      payload          jsonb NOT NULL,
      updated_at       timestamptz NOT NULL
    )`
})

/**
 * Payments (issue 6): the attempts of each checkout session, recorded before the provider is
 * called, and the charges of the built-in test processor, keyed by the provider idempotency key.
 */
const m0005_payments: Migration = Effect.gen(function*() {
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
})

/**
 * Coupons (issue 8): the redemption count per catalog coupon (seeded from the catalog like stock)
 * and the holds a completion takes before the charge, counted in the completing transaction.
 */
const m0006_coupons: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE coupons (
      id              text PRIMARY KEY,
      times_redeemed  integer NOT NULL CHECK (times_redeemed >= 0)
    )`
  yield* sql`
    CREATE TABLE coupon_holds (
      coupon_id   text NOT NULL REFERENCES coupons (id),
      session_id  text NOT NULL,
      expires_at  timestamptz NOT NULL,
      PRIMARY KEY (coupon_id, session_id)
    )`
  yield* sql`CREATE INDEX coupon_holds_session ON coupon_holds (session_id)`
})

/** All migrations, by `<id>_<name>`. Append new ones at the end. */
export const migrations: Record<string, Migration> = {
  "0001_checkout": m0001_checkout,
  "0002_idempotency_keys": m0002_idempotency_keys,
  "0003_vault_tokens": m0003_vault_tokens,
  "0004_orders_outbox": m0004_orders_outbox,
  "0005_payments": m0005_payments,
  "0006_coupons": m0006_coupons
}

/** The loader for `Migrator.make(...)({ loader })` / `PgMigrator.layer({ loader })`. */
export const migrationsLoader: Migrator.Loader = Migrator.fromRecord(migrations)
