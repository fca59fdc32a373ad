/** `ChargeStore` over SQL: the `processor_charges` table (migration 0005), keyed by idempotency key. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { statementRunner } from "../../db/statement-runner.ts"
import { type ChargeOutcome, ChargeStore, type ProcessorCharge } from "../charge-store.ts"

interface ChargeRow {
  readonly idempotency_key: string
  readonly id: string
  readonly amount: number | string
  readonly currency: string
  readonly outcome: ChargeOutcome
  readonly created_ms: number | string
  readonly eci: string | null
  readonly ds_trans_id: string | null
}

const fromRow = (row: ChargeRow): ProcessorCharge => ({
  idempotencyKey: row.idempotency_key,
  id: row.id,
  amount: Number(row.amount),
  currency: row.currency,
  outcome: row.outcome,
  createdAt: Math.round(Number(row.created_ms)),
  ...(row.eci === null || row.ds_trans_id === null
    ? {}
    : { authentication: { eci: row.eci, dsTransId: row.ds_trans_id } })
})

export const SqlChargeStore = Layer.effect(
  ChargeStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = statementRunner(sql)
    const select = (key: string) =>
      run(sql<ChargeRow>`
        SELECT idempotency_key, id, amount, currency, outcome, eci, ds_trans_id,
               (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
        FROM processor_charges WHERE idempotency_key = ${key}`).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow))
      )
    return {
      findCharge: select,
      // One round trip for a new key; a key another request stored first is read back instead.
      recordCharge: (charge) =>
        run(sql<ChargeRow>`
          INSERT INTO processor_charges (idempotency_key, id, amount, currency, outcome, created_at, eci, ds_trans_id)
          VALUES (${charge.idempotencyKey}, ${charge.id}, ${charge.amount}, ${charge.currency}, ${charge.outcome},
                  ${new Date(charge.createdAt).toISOString()}::timestamptz,
                  ${charge.authentication?.eci ?? null}, ${charge.authentication?.dsTransId ?? null})
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING idempotency_key, id, amount, currency, outcome, eci, ds_trans_id,
                    (extract(epoch FROM created_at) * 1000)::float8 AS created_ms`).pipe(
          Effect.flatMap((rows) =>
            rows[0] !== undefined
              ? Effect.succeed(fromRow(rows[0]))
              : Effect.map(select(charge.idempotencyKey), Option.getOrElse(() => charge))
          )
        ),
      listCharges: run(sql<ChargeRow>`
        SELECT idempotency_key, id, amount, currency, outcome, eci, ds_trans_id,
               (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
        FROM processor_charges ORDER BY created_at, id`).pipe(Effect.map((rows) => rows.map(fromRow)))
    }
  })
)
