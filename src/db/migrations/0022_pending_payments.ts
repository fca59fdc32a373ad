/**
 * The payment attempts still pending, by when they were made: what the settlement sweep looks for
 * (`sessionsWithPaymentPendingSince`, `src/checkout/payment-settlement.ts`), a payment
 * its request left pending and no retry resumed. Partial: an attempt is pending only for the
 * moments its request runs, so the index holds next to nothing. An attempt's update to its
 * outcome leaves it, which makes that update one that writes the table's other indexes too (a
 * column of the predicate changes): a few index entries per completion.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX payment_attempts_pending ON payment_attempts (created_at) WHERE state = 'pending'`
}) satisfies Migration
