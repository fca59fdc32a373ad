/** A session's wire form (`data`) and internal fields (`internal`) as `json` text (`docs/decisions.md`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

/** The internal fields when this migration was written (`INTERNAL_SESSION_FIELDS`). */
const INTERNAL_FIELDS = ["items", "order", "details", "authentication"]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    DROP FUNCTION IF EXISTS checkout_create_session(
      text, text, jsonb, timestamptz, timestamptz, timestamptz, text[], integer[], timestamptz, timestamptz)`
  yield* sql`
    DROP FUNCTION IF EXISTS checkout_complete_paid(
      text, bigint, text, jsonb, timestamptz, timestamptz, integer, text, timestamptz,
      text, text, jsonb, timestamptz, text, text, jsonb, timestamptz)`
  yield* sql`DROP FUNCTION IF EXISTS checkout_session_for_payment(text, boolean)`
  yield* sql`DROP FUNCTION IF EXISTS checkout_lock_session_for_payment(text)`
  yield* sql`ALTER TABLE checkout_sessions ADD COLUMN internal jsonb`
  yield* sql`
    UPDATE checkout_sessions s SET
      internal = (
        SELECT COALESCE(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(s.data) AS e
        WHERE e.key = ANY (${INTERNAL_FIELDS}::text[])
      ),
      data = s.data - ${INTERNAL_FIELDS}::text[]`
  yield* sql`
    ALTER TABLE checkout_sessions
      ALTER COLUMN data TYPE json USING data::json,
      ALTER COLUMN internal TYPE json USING internal::json,
      ALTER COLUMN internal SET NOT NULL`
  yield* sql.unsafe(`
    DO $$
    BEGIN
      EXECUTE 'ALTER TABLE checkout_sessions ALTER COLUMN data SET COMPRESSION lz4';
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
      NULL;
    END
    $$`)
}) satisfies Migration
