/**
 * Stores a request's answer on its idempotency claim inside the statement of the write it answers
 * (`SELECT CASE WHEN <write> THEN idempotency_store_answer(…) ELSE false END`), so both commit together.
 * A claim no longer this request's raises `IDEMPOTENCY_CLAIM_LOST`, rolling the write back too.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { iso } from "../sql-values.ts"
import { fromSqlError, StorageError } from "../storage-error.ts"
import type { SqlFunction } from "./sql-function.ts"

export const IDEMPOTENCY_CLAIM_LOST = "IK001"

export const isClaimLost = (error: SqlError.SqlError): boolean =>
  (error.cause as { readonly code?: unknown } | undefined)?.code === IDEMPOTENCY_CLAIM_LOST

export const claimLost = new StorageError({
  reason: "unavailable",
  cause: new Error("the idempotency claim was taken over before the answer was stored")
})

/** For `statementRunner(sql, answeringError)`: a lost claim is `claimLost`. */
export const answeringError = (error: SqlError.SqlError): StorageError =>
  isClaimLost(error) ? claimLost : fromSqlError(error)

export const storeAnswerCall = (
  sql: SqlClient.SqlClient,
  { expiresAt, response, target: { claimId, scope } }: {
    readonly target: {
      readonly scope: { readonly keyId: string; readonly method: string; readonly path: string; readonly key: string }
      readonly claimId: string
    }
    readonly response: {
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: Uint8Array
    }
    readonly expiresAt: number
  }
) =>
  sql`idempotency_store_answer(
    ${scope.keyId}, ${scope.method}, ${scope.path}, ${scope.key}, ${claimId},
    ${response.status}, ${JSON.stringify(response.headers)}::jsonb, ${Buffer.from(response.body)},
    ${iso(expiresAt)}::timestamptz
  )`

export const idempotencyStoreAnswer: SqlFunction = {
  name: "idempotency_store_answer",
  version: 1,
  definition: `
  CREATE OR REPLACE FUNCTION idempotency_store_answer(
    p_key_id text, p_method text, p_path text, p_key text, p_claim_id text,
    p_status integer, p_headers jsonb, p_body bytea, p_expires_at timestamptz
  ) RETURNS boolean
  LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan
  AS $fn$
  BEGIN
    UPDATE idempotency_keys
    SET state = 'completed', status = p_status, headers = p_headers, body = p_body,
        expires_at = p_expires_at, lease_until = NULL
    WHERE key_id = p_key_id AND method = p_method AND path = p_path AND idempotency_key = p_key
      AND claim_id = p_claim_id AND state = 'in_flight';
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the idempotency claim was taken over before the answer was stored'
        USING ERRCODE = '${IDEMPOTENCY_CLAIM_LOST}';
    END IF;
    RETURN true;
  END
  $fn$`
}
