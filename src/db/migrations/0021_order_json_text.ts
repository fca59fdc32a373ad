/**
 * Orders and queued and received events as `json` text, as sessions since 0020. `permalink_token` is
 * dropped and added again: PostgreSQL cannot retype a column a generated column reads.
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
