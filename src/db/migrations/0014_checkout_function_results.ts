/**
 * Two checkout functions answer differently, which `CREATE OR REPLACE` cannot do: the old ones are
 * dropped here and `../sql-functions.ts` creates the current ones right after the migrations.
 * `checkout_create_session` answers whether it inserted (no longer the availability it saw: the
 * caller decides again under the locks instead); `checkout_lock_session_for_payment` answers the
 * session's version too (for the conditional completion under the lock).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    DROP FUNCTION IF EXISTS checkout_create_session(
      text, text, jsonb, timestamptz, timestamptz, timestamptz, text[], integer[], timestamptz, timestamptz)`
  yield* sql`DROP FUNCTION IF EXISTS checkout_lock_session_for_payment(text)`
}) satisfies Migration
