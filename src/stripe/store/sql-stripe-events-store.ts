/**
 * `StripeEventsStore` over PostgreSQL (`stripe_events`, migration 0025): one `INSERT … ON CONFLICT DO
 * NOTHING`, so of two concurrent deliveries of one event the second waits for the first's
 * transaction and then records nothing (or, if the first rolled back, records it).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StripeEventsStore, type StripeEventsStoreService } from "../stripe-events-store.ts"

export const make: Effect.Effect<StripeEventsStoreService, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => {
    const run = statementRunner(sql)
    return StripeEventsStore.of({
      transaction: sqlTransaction(sql),
      has: (id) =>
        run(sql<{ id: string }>`SELECT id FROM stripe_events WHERE id = ${id}`).pipe(
          Effect.map((rows) => rows.length === 1)
        ),
      record: (event) =>
        run(sql<{ id: string }>`
          INSERT INTO stripe_events (id, type, object_id, outcome, received_at)
          VALUES (${event.id}, ${event.type}, ${event.objectId ?? null}, ${event.outcome},
                  ${iso(event.receivedAt)}::timestamptz)
          ON CONFLICT (id) DO NOTHING
          RETURNING id`).pipe(Effect.map((rows) => rows.length === 1))
    })
  }
)

export const SqlStripeEventsStore: Layer.Layer<StripeEventsStore, never, SqlClient.SqlClient> = Layer.effect(
  StripeEventsStore,
  make
)
