/** A built-in processor key may be closed `voided`, so that a late request finds it taken instead of charging. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE processor_charges
      DROP CONSTRAINT processor_charges_outcome_check,
      ADD CONSTRAINT processor_charges_outcome_check
        CHECK (outcome IN ('approved', 'card_declined', 'insufficient_funds', 'voided'))`
}) satisfies Migration
