/** Drops two checkout functions whose results change (`CREATE OR REPLACE` cannot change them). */
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
