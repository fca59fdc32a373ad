/** `StripePaymentStore` over SQL: the `stripe_payments` table (migration 0024), keyed by attempt key. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { statementRunner } from "../../db/statement-runner.ts"
import { type StripePayment, StripePaymentStore } from "../stripe-payment-store.ts"

interface PaymentRow {
  readonly idempotency_key: string
  readonly session_id: string
  readonly payment_intent_id: string | null
  readonly state: "open" | "voided"
  readonly created_ms: number | string
  readonly updated_ms: number | string
}

const fromRow = (row: PaymentRow): StripePayment => ({
  key: row.idempotency_key,
  sessionId: row.session_id,
  paymentIntentId: row.payment_intent_id ?? undefined,
  state: row.state,
  createdAt: Math.round(Number(row.created_ms)),
  updatedAt: Math.round(Number(row.updated_ms))
})

const at = (ms: number) => new Date(ms).toISOString()

export const SqlStripePaymentStore = Layer.effect(
  StripePaymentStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = statementRunner(sql)
    const columns = sql`idempotency_key, session_id, payment_intent_id, state,
      (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
      (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms`
    const first = (rows: ReadonlyArray<PaymentRow>) => Option.map(Option.fromNullable(rows[0]), fromRow)
    const find = (key: string) =>
      run(sql<PaymentRow>`SELECT ${columns} FROM stripe_payments WHERE idempotency_key = ${key}`).pipe(
        Effect.map(first)
      )
    return {
      find,
      // One round trip for a new key; a key another request stored first is read back instead.
      claim: ({ key, now, sessionId, state }) =>
        run(sql<PaymentRow>`
          INSERT INTO stripe_payments (idempotency_key, session_id, payment_intent_id, state, created_at, updated_at)
          VALUES (${key}, ${sessionId}, NULL, ${state}, ${at(now)}::timestamptz, ${at(now)}::timestamptz)
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING ${columns}`).pipe(
          Effect.flatMap((rows) =>
            rows[0] !== undefined
              ? Effect.succeed(fromRow(rows[0]))
              : Effect.map(
                find(key),
                Option.getOrElse((): StripePayment => ({
                  key,
                  sessionId,
                  paymentIntentId: undefined,
                  state,
                  createdAt: now,
                  updatedAt: now
                }))
              )
          )
        ),
      recordIntent: (key, paymentIntentId, now) =>
        run(sql<PaymentRow>`
          UPDATE stripe_payments SET payment_intent_id = ${paymentIntentId}, updated_at = ${at(now)}::timestamptz
          WHERE idempotency_key = ${key} AND payment_intent_id IS NULL
          RETURNING ${columns}`).pipe(
          Effect.flatMap((rows) => rows[0] !== undefined ? Effect.succeed(first(rows)) : find(key))
        ),
      markVoided: (key, now) =>
        Effect.asVoid(run(sql`
          UPDATE stripe_payments SET state = 'voided', updated_at = ${at(now)}::timestamptz
          WHERE idempotency_key = ${key} AND state <> 'voided'`))
    }
  })
)
