/** `PaymentAttemptStore` over SQL: the `payment_attempts` table, by (session, sequence). */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { iso } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import type { PaymentAttemptStore } from "../checkout-store.ts"
import { type PaymentAttempt } from "../payment/attempt.ts"
import { storedDataFailure } from "./sql-session-row.ts"

/** An attempt as `checkout_session_for_payment` answers it (JSON, times as epoch ms). */
export interface AttemptRow {
  readonly session_id: string
  readonly sequence: number
  readonly idempotency_key: string
  readonly amount: number | string
  readonly currency: string
  readonly credential_ref: string
  readonly state: PaymentAttempt["state"]
  readonly charge_id: string | null
  readonly created_ms: number | string
  readonly updated_ms: number | string
}

export const attemptFromRow = (row: AttemptRow): PaymentAttempt => ({
  sessionId: row.session_id,
  sequence: Number(row.sequence),
  idempotencyKey: row.idempotency_key,
  amount: Number(row.amount),
  currency: row.currency,
  credentialRef: row.credential_ref,
  state: row.state,
  chargeId: row.charge_id ?? undefined,
  createdAt: Math.round(Number(row.created_ms)),
  updatedAt: Math.round(Number(row.updated_ms))
})

export const makeSqlPaymentAttemptStore = (sql: SqlClient.SqlClient): PaymentAttemptStore => {
  const run = statementRunner(sql)
  return {
    update: (attempt) =>
      run(sql<{ sequence: number }>`
        UPDATE payment_attempts
        SET state = ${attempt.state}, charge_id = ${attempt.chargeId ?? null},
            updated_at = ${iso(attempt.updatedAt)}::timestamptz
        WHERE session_id = ${attempt.sessionId} AND sequence = ${attempt.sequence}
        RETURNING sequence`).pipe(
        Effect.flatMap((rows) =>
          rows.length === 1
            ? Effect.void
            : Effect.fail(storedDataFailure(`no payment attempt ${attempt.idempotencyKey}`))
        )
      )
  }
}
