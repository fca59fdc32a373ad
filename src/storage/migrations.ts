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

/** All migrations, by `<id>_<name>`. Append new ones at the end. */
export const migrations: Record<string, Migration> = {
  "0001_checkout": m0001_checkout
}

/** The loader for `Migrator.make(...)({ loader })` / `PgMigrator.layer({ loader })`. */
export const migrationsLoader: Migrator.Loader = Migrator.fromRecord(migrations)
