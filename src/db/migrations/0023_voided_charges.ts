/**
 * A key of the built-in processor may be closed without a charge: the settlement of a payment its
 * request left pending records the attempt's key `voided` when no charge was made under it
 * (`PaymentProvider.settleCharge`), so that a request still on its way to the charge finds the
 * key taken instead of charging for a session made payable again.
 */
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
