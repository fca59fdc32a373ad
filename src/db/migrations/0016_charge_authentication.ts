/**
 * What a charge of the built-in processor was authenticated with (3-D Secure): the electronic
 * commerce indicator and the directory server's transaction id of the result it relied on; both
 * empty for a charge that needed no authentication.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE processor_charges ADD COLUMN eci text, ADD COLUMN ds_trans_id text`
}) satisfies Migration
