/** Sessions, stock, reservations and orders. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
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
}) satisfies Migration
