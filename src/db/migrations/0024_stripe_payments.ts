/** The Stripe payments by payment attempt key: the attempt's PaymentIntent, or the key closed before one. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE stripe_payments (
      idempotency_key    text PRIMARY KEY,
      session_id         text NOT NULL,
      payment_intent_id  text UNIQUE,
      state              text NOT NULL CHECK (state IN ('open', 'voided')),
      created_at         timestamptz NOT NULL,
      updated_at         timestamptz NOT NULL
    )`
}) satisfies Migration
