/**
 * A session's row keeps its wire form and its internal fields as JSON text in two columns: `data`
 * (`json`) is the wire form as the service serialized it (`checkoutSessionJson`), which a read of
 * the session answers as it is, and `internal` (`json`) the fields the wire form lacks
 * (`internalSessionJson`: items, order, details, authentication).
 *
 * Why: as `jsonb`, every write of a session had PostgreSQL parse its 3–4 KB of text into the binary
 * form and compress that, and every read render it back to text; it was most of what PostgreSQL
 * spent on a create (`docs/decisions.md#performance-decisions`). `json` keeps the text, only checked
 * to be JSON; nothing queries inside a session's document (the columns `status` and `expires_at`
 * serve the filters). `data` is compressed with LZ4 where the server has it (PostgreSQL 14+ built
 * with it; otherwise the default, pglz), several times cheaper to compress than pglz.
 *
 * Existing rows are split as the service would write them; jsonb's text form (keys in its own
 * order, spaced separators) is the same JSON value. The functions that take or answer a session's
 * document change their signatures, so they are dropped here and created again right after the
 * migrations; processes of the previous release must be stopped first (docs/operations.md).
 * `checkout_lock_session_for_payment`, kept only for the release before the previous one, goes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

/** The internal fields of a session when this migration was written (`INTERNAL_SESSION_FIELDS`). */
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
  // LZ4 only where the server was built with it; the statement's own error says when not.
  yield* sql.unsafe(`
    DO $$
    BEGIN
      EXECUTE 'ALTER TABLE checkout_sessions ALTER COLUMN data SET COMPRESSION lz4';
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
      NULL;
    END
    $$`)
}) satisfies Migration
