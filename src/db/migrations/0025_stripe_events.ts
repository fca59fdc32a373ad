/** The Stripe events acted on, each once (`src/stripe/stripe-events-store.ts`); 0024 is the Stripe payments'. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE stripe_events (
      id           text PRIMARY KEY,
      type         text NOT NULL,
      object_id    text,
      outcome      text NOT NULL,
      received_at  timestamptz NOT NULL
    )`
}) satisfies Migration
