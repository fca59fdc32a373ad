/**
 * Orders, their queued events and the events a receiver kept hold JSON text (`json`) instead of
 * `jsonb`, as sessions do since 0020: `orders.data`, `webhook_outbox.payload`,
 * `received_events.payload` and `received_orders.payload`.
 *
 * Why: every checkout writes an order and its event and, at the receiver, the event and the
 * order's latest state, each a document of about 1 KB (more for orders of many lines) that
 * `jsonb` had PostgreSQL parse into its binary form on write and render back to text on read,
 * and compress with pglz once past 2 KB. Nothing needs the binary form: the only paths read
 * inside a document are `orders.data`'s `type`, `status` and `permalink_url` (the console's
 * listing and the generated `permalink_token`), which `json`'s `->>` answers from the text. The
 * documents are compressed with LZ4 where the server has it.
 *
 * `permalink_token` is generated from `data`, and PostgreSQL cannot change the type of a column a
 * generated column reads: it is dropped with its unique index and added again, computed by the
 * same expression from the same URLs. The functions that take an order's or an event's document
 * change their signatures, so they are dropped here and created again right after the migrations;
 * processes of the previous release must be stopped first (docs/operations.md).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    DROP FUNCTION IF EXISTS checkout_complete_paid(
      text, bigint, text, json, json, timestamptz, timestamptz, integer, text, timestamptz,
      text, text, jsonb, timestamptz, text, text, jsonb, timestamptz)`
  yield* sql`
    DROP FUNCTION IF EXISTS order_save_with_event(text, text, jsonb, timestamptz, text, text, jsonb, timestamptz)`
  yield* sql`ALTER TABLE orders DROP COLUMN permalink_token`
  yield* sql`ALTER TABLE orders ALTER COLUMN data TYPE json USING data::json`
  yield* sql`
    ALTER TABLE orders ADD COLUMN permalink_token text
      GENERATED ALWAYS AS (substring(data->>'permalink_url' from '/order-status/([0-9A-Za-z]{22})$')) STORED`
  yield* sql`CREATE UNIQUE INDEX orders_permalink_token ON orders (permalink_token)`
  yield* sql`ALTER TABLE webhook_outbox ALTER COLUMN payload TYPE json USING payload::json`
  yield* sql`ALTER TABLE received_events ALTER COLUMN payload TYPE json USING payload::json`
  yield* sql`ALTER TABLE received_orders ALTER COLUMN payload TYPE json USING payload::json`
  // LZ4 only where the server was built with it; the first statement's error says when not.
  yield* sql.unsafe(`
    DO $$
    BEGIN
      EXECUTE 'ALTER TABLE orders ALTER COLUMN data SET COMPRESSION lz4';
      EXECUTE 'ALTER TABLE webhook_outbox ALTER COLUMN payload SET COMPRESSION lz4';
      EXECUTE 'ALTER TABLE received_events ALTER COLUMN payload SET COMPRESSION lz4';
      EXECUTE 'ALTER TABLE received_orders ALTER COLUMN payload SET COMPRESSION lz4';
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
      NULL;
    END
    $$`)
}) satisfies Migration
