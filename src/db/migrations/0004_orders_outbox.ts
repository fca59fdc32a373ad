/** Order events (CONTRACT §8): the sender's outbox, the receiver's log and each order's latest state. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
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
}) satisfies Migration
