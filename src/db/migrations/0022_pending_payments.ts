/** Pending payment attempts by age, for the settlement sweep; partial, so it holds next to nothing. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX payment_attempts_pending ON payment_attempts (created_at) WHERE state = 'pending'`
}) satisfies Migration
