/**
 * The SQL functions the stores call, one file each in `./functions/` with its current body and version
 * (`test/db/sql-functions.test.ts` holds one to the other), applied after the migrations
 * (`docs/operations.md#upgrading`). Those reading `reservations` run with `enable_seqscan = off`: a
 * generic plan made while the table was small would scan it for ever after.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { checkoutCompletePaid } from "./functions/checkout-complete-paid.ts"
import { checkoutCreateSession } from "./functions/checkout-create-session.ts"
import { checkoutLockStock } from "./functions/checkout-lock-stock.ts"
import { checkoutRemoveReservations } from "./functions/checkout-remove-reservations.ts"
import { checkoutSessionForPayment } from "./functions/checkout-session-for-payment.ts"
import { checkoutSetReservations } from "./functions/checkout-set-reservations.ts"
import { idempotencyStoreAnswer } from "./functions/idempotency-store-answer.ts"
import { orderSaveWithEvent } from "./functions/order-save-with-event.ts"
import { rateLimitTake, rateLimitTakeUpTo } from "./functions/rate-limit-take.ts"
import type { SqlFunction } from "./functions/sql-function.ts"
import { stockShardOf } from "./functions/stock-shards.ts"

export type { SqlFunction }

/** Every function, in an order where a function comes after those its body calls. */
export const sqlFunctions: ReadonlyArray<SqlFunction> = [
  stockShardOf,
  checkoutLockStock,
  checkoutSetReservations,
  checkoutRemoveReservations,
  checkoutCreateSession,
  checkoutSessionForPayment,
  orderSaveWithEvent,
  checkoutCompletePaid,
  rateLimitTakeUpTo,
  rateLimitTake,
  idempotencyStoreAnswer
]

export const definitionHash = (definition: string): string => createHash("sha256").update(definition).digest("hex")

export const applySqlFunctions = Effect.fnUntraced(function*(functions: ReadonlyArray<SqlFunction> = sqlFunctions) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ name: string; hash: string; version: number }>`
      SELECT f.name, f.hash, f.version FROM sql_functions f
      WHERE EXISTS (
        SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.proname = f.name AND n.nspname = current_schema()
      )`
  const recorded = new Map(rows.map((row) => [row.name, row]))
  const applied: Array<string> = []
  for (const fn of functions) {
    const hash = definitionHash(fn.definition)
    const current = recorded.get(fn.name)
    if (current !== undefined && (current.version > fn.version || current.hash === hash)) continue
    yield* sql.unsafe(fn.definition)
    yield* sql`
        INSERT INTO sql_functions (name, hash, version) VALUES (${fn.name}, ${hash}, ${fn.version})
        ON CONFLICT (name) DO UPDATE
        SET hash = EXCLUDED.hash, version = EXCLUDED.version, applied_at = now()`
    applied.push(fn.name)
  }
  return applied
})
