/** The 3-D Secure ECI and transaction id a built-in processor charge relied on; NULL when none was needed. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE processor_charges ADD COLUMN eci text, ADD COLUMN ds_trans_id text`
}) satisfies Migration
