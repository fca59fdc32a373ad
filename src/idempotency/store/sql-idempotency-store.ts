/** `IdempotencyStore` over PostgreSQL (`idempotency_keys`); the claim is one statement (`docs/concurrency.md`). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { isClaimLost, storeAnswerCall } from "../../db/functions/idempotency-store-answer.ts"
import { iso, jsonValue, millis } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StorageError } from "../../db/storage-error.ts"
import {
  type ClaimOutcome,
  type ClaimRequest,
  type IdempotencyRecord,
  type IdempotencyScope,
  IdempotencyStore,
  type IdempotencyStoreService
} from "../idempotency-store.ts"

interface Row {
  readonly fingerprint: string
  readonly state: string
  readonly status: number | null
  readonly headers: unknown
  readonly body: Uint8Array | null
  readonly created_ms: number | string
  readonly expires_ms: number | string
  readonly lease_ms: number | string | null
}

const toHeaders = (value: unknown): Record<string, string> => {
  const json = jsonValue(value)
  const headers: Record<string, string> = {}
  if (json !== null && typeof json === "object") {
    for (const [name, header] of Object.entries(json)) if (typeof header === "string") headers[name] = header
  }
  return headers
}

const recordFromRow = (scope: IdempotencyScope, row: Row): IdempotencyRecord => {
  const common = {
    scope,
    fingerprint: row.fingerprint,
    createdAt: millis(row.created_ms),
    expiresAt: millis(row.expires_ms)
  }
  if (row.state === "completed" && row.status !== null && row.body !== null) {
    return {
      ...common,
      state: "completed",
      response: { status: Number(row.status), headers: toHeaders(row.headers), body: new Uint8Array(row.body) }
    }
  }
  return { ...common, state: "in_flight", leaseUntil: row.lease_ms === null ? 0 : millis(row.lease_ms) }
}

/** Attempts of a claim whose conflicting row disappeared before it could be read. */
const CLAIM_ATTEMPTS = 5

export const make: Effect.Effect<IdempotencyStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const run = statementRunner(sql)

  const readLive = (scope: IdempotencyScope, now: number) =>
    run(sql<Row>`
      SELECT fingerprint, state, status, headers, body,
             (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
             (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
             (extract(epoch FROM lease_until) * 1000)::float8 AS lease_ms
      FROM idempotency_keys
      WHERE key_id = ${scope.keyId} AND method = ${scope.method} AND path = ${scope.path}
        AND idempotency_key = ${scope.key} AND expires_at > ${iso(now)}::timestamptz`).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => recordFromRow(scope, row)))
    )

  const claimOnce = Effect.fnUntraced(function*(
    scope: IdempotencyScope,
    request: ClaimRequest
  ): Effect.fn.Return<Option.Option<ClaimOutcome>, StorageError> {
    const now = iso(request.now)
    const claimed = yield* run(sql<{ claim_id: string }>`
        INSERT INTO idempotency_keys
          (key_id, method, path, idempotency_key, fingerprint, state, claim_id, status, headers, body,
           created_at, expires_at, lease_until)
        VALUES (${scope.keyId}, ${scope.method}, ${scope.path}, ${scope.key}, ${request.fingerprint}, 'in_flight',
                ${request.claimId}, NULL, NULL, NULL, ${now}::timestamptz, ${iso(request.expiresAt)}::timestamptz,
                ${iso(request.leaseUntil)}::timestamptz)
        ON CONFLICT (key_id, method, path, idempotency_key) DO UPDATE SET
          fingerprint = EXCLUDED.fingerprint, state = 'in_flight', claim_id = EXCLUDED.claim_id,
          status = NULL, headers = NULL, body = NULL, created_at = EXCLUDED.created_at,
          expires_at = EXCLUDED.expires_at, lease_until = EXCLUDED.lease_until
        WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
           OR (idempotency_keys.state = 'in_flight'
               AND idempotency_keys.lease_until <= EXCLUDED.created_at
               AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
        RETURNING claim_id`)
    if (claimed[0]?.claim_id === request.claimId) return Option.some<ClaimOutcome>({ _tag: "Claimed" })
    const existing = yield* readLive(scope, request.now)
    return Option.map(existing, (record): ClaimOutcome => ({ _tag: "Existing", record }))
  })

  const claim: IdempotencyStoreService["claim"] = Effect.fnUntraced(function*(scope, request) {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const outcome = yield* claimOnce(scope, request)
      if (Option.isSome(outcome)) return outcome.value
    }
    return yield* new StorageError({
      reason: "failure",
      cause: new Error("idempotency claim: the conflicting record kept disappearing")
    })
  })

  const renewLease: IdempotencyStoreService["renewLease"] = (scope, claimId, leaseUntil) =>
    run(sql<{ claim_id: string }>`
      UPDATE idempotency_keys
      SET lease_until = ${iso(leaseUntil)}::timestamptz,
          expires_at = GREATEST(expires_at, ${iso(leaseUntil)}::timestamptz)
      WHERE key_id = ${scope.keyId} AND method = ${scope.method} AND path = ${scope.path}
        AND idempotency_key = ${scope.key} AND claim_id = ${claimId} AND state = 'in_flight'
      RETURNING claim_id`).pipe(Effect.map((rows) => rows.length === 1))

  // `idempotency_store_answer`, as the writes storing their answer call it; a lost claim answers false here.
  const complete: IdempotencyStoreService["complete"] = (scope, claimId, response, expiresAt) =>
    sql`SELECT ${storeAnswerCall(sql, { target: { scope, claimId }, response, expiresAt })}`.pipe(
      Effect.as(true),
      Effect.catchIf(isClaimLost, () => Effect.succeed(false)),
      run
    )

  const release: IdempotencyStoreService["release"] = (scope, claimId) =>
    run(sql<{ claim_id: string }>`
      DELETE FROM idempotency_keys
      WHERE key_id = ${scope.keyId} AND method = ${scope.method} AND path = ${scope.path}
        AND idempotency_key = ${scope.key} AND claim_id = ${claimId} AND state = 'in_flight'
      RETURNING claim_id`).pipe(Effect.map((rows) => rows.length === 1))

  const deleteExpired: IdempotencyStoreService["deleteExpired"] = (now, limit) =>
    limit <= 0 ? Effect.succeed(0) : run(sql<{ key_id: string }>`
      DELETE FROM idempotency_keys
      WHERE (key_id, method, path, idempotency_key) IN (
        SELECT key_id, method, path, idempotency_key FROM idempotency_keys
        WHERE expires_at <= ${iso(now)}::timestamptz
          AND (state <> 'in_flight' OR lease_until <= ${iso(now)}::timestamptz)
        ORDER BY expires_at
        LIMIT ${Math.floor(limit)}
        FOR UPDATE SKIP LOCKED)
      RETURNING key_id`).pipe(Effect.map((rows) => rows.length))

  return IdempotencyStore.of({ claim, renewLease, complete, release, find: readLive, deleteExpired })
})

/** `IdempotencyStore` over the `SqlClient` in context (migrated by `src/db/database.ts`). */
export const SqlIdempotencyStore: Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(
  IdempotencyStore,
  make
)
