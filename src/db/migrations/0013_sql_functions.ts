/**
 * The record of the SQL functions applied to this database (`../sql-functions.ts`): each function's
 * version and definition hash, so that a definition is applied when it changed and never over a
 * newer version.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sql_functions (
      name          text PRIMARY KEY,
      hash          text NOT NULL,
      version       integer NOT NULL,
      applied_at    timestamptz NOT NULL DEFAULT now()
    )`
}) satisfies Migration
