/** The version and definition hash of each SQL function applied (`../sql-functions.ts`). */
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
