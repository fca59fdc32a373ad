/** `VaultStore` over PostgreSQL (`vault_tokens`, migration 0003): the envelope as `bytea`, no card data in clear. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, type ParseResult, Schema } from "effect"
import { answeringError, storeAnswerCall } from "../../db/functions/idempotency-store-answer.ts"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso, jsonValue, millis } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StorageError } from "../../db/storage-error.ts"
import { VaultStore, type VaultStoreService, VaultTokenRecord } from "../vault-store.ts"

interface TokenRow {
  readonly id: string
  readonly client_key_id: string
  readonly allowance_reason: string
  readonly max_amount: string | number
  readonly currency: string
  readonly checkout_session_id: string
  readonly merchant_id: string
  readonly expires_ms: string | number
  readonly risk_signals: unknown
  readonly metadata: unknown
  readonly card_key_id: string
  readonly card_iv: Uint8Array
  readonly card_ciphertext: Uint8Array
  readonly card_tag: Uint8Array
  readonly fingerprint: string
  readonly brand: string
  readonly last4: string
  readonly funding: string
  readonly state: string
  readonly created_ms: string | number
  readonly used_ms: string | number | null
  readonly used_by_session: string | null
}

const decodeRecord = Schema.decodeUnknown(VaultTokenRecord)

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64")

const fromParseError = (error: ParseResult.ParseError): StorageError =>
  new StorageError({ reason: "failure", cause: error })

const recordFromRow = (row: TokenRow): Effect.Effect<VaultTokenRecord, StorageError> =>
  Effect.try({
    try: () => ({
      id: row.id,
      clientKeyId: row.client_key_id,
      allowance: {
        reason: row.allowance_reason,
        max_amount: Number(row.max_amount),
        currency: row.currency,
        checkout_session_id: row.checkout_session_id,
        merchant_id: row.merchant_id,
        expiresAt: millis(row.expires_ms)
      },
      riskSignals: jsonValue(row.risk_signals),
      metadata: jsonValue(row.metadata),
      createdAt: millis(row.created_ms),
      card: {
        key_id: row.card_key_id,
        iv: base64(row.card_iv),
        ciphertext: base64(row.card_ciphertext),
        tag: base64(row.card_tag)
      },
      fingerprint: row.fingerprint,
      brand: row.brand,
      last4: row.last4,
      funding: row.funding,
      state: row.state,
      ...(row.used_ms === null ? {} : { usedAt: millis(row.used_ms) }),
      ...(row.used_by_session === null ? {} : { usedBySession: row.used_by_session })
    }),
    catch: (cause) => new StorageError({ reason: "failure", cause })
  }).pipe(Effect.flatMap((raw) => Effect.mapError(decodeRecord(raw), fromParseError)))

export const make: Effect.Effect<VaultStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const run = statementRunner(sql)
  const runAnswering = statementRunner(sql, answeringError)

  const firstRecord = (rows: ReadonlyArray<TokenRow>) =>
    rows[0] === undefined
      ? Effect.succeed(Option.none<VaultTokenRecord>())
      : Effect.map(recordFromRow(rows[0]), Option.some)

  const transaction: VaultStoreService["transaction"] = sqlTransaction(sql)

  // With an answer, one statement still: a lost claim raises, and nothing is inserted.
  const insertToken: VaultStoreService["insertToken"] = (record, answer) => {
    const insert = sql`
      INSERT INTO vault_tokens (
        id, client_key_id, allowance_reason, max_amount, currency, checkout_session_id, merchant_id,
        expires_at, risk_signals, metadata, card_key_id, card_iv, card_ciphertext, card_tag,
        fingerprint, brand, last4, funding, state, created_at, used_at, used_by_session
      ) VALUES (
        ${record.id}, ${record.clientKeyId}, ${record.allowance.reason}, ${record.allowance.max_amount},
        ${record.allowance.currency}, ${record.allowance.checkout_session_id}, ${record.allowance.merchant_id},
        ${iso(record.allowance.expiresAt)}::timestamptz, ${JSON.stringify(record.riskSignals)}::jsonb,
        ${JSON.stringify(record.metadata)}::jsonb, ${record.card.key_id},
        ${Buffer.from(record.card.iv, "base64")}, ${Buffer.from(record.card.ciphertext, "base64")},
        ${Buffer.from(record.card.tag, "base64")}, ${record.fingerprint}, ${record.brand}, ${record.last4},
        ${record.funding}, ${record.state}, ${iso(record.createdAt)}::timestamptz,
        ${record.usedAt === undefined ? null : iso(record.usedAt)}::timestamptz, ${record.usedBySession ?? null}
      )`
    return answer === undefined
      ? Effect.asVoid(run(insert))
      : Effect.asVoid(runAnswering(sql`
        WITH inserted AS (${insert} RETURNING id)
        SELECT ${storeAnswerCall(sql, answer)} AS stored FROM inserted`))
  }

  const tokenColumns = sql`*, (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
    (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
    (extract(epoch FROM used_at) * 1000)::float8 AS used_ms`

  const select = (id: string, lock: boolean) =>
    lock
      ? sql<TokenRow>`SELECT ${tokenColumns} FROM vault_tokens WHERE id = ${id} FOR UPDATE`
      : sql<TokenRow>`SELECT ${tokenColumns} FROM vault_tokens WHERE id = ${id}`

  const getToken = (id: string) => run(select(id, false)).pipe(Effect.flatMap(firstRecord))
  const lockToken = (id: string) => run(select(id, true)).pipe(Effect.flatMap(firstRecord))

  // A concurrent second update waits for the first's row lock, re-checks `state` and changes nothing.
  const markTokenUsed = (id: string, sessionId: string, at: number) =>
    run(sql<TokenRow>`
      UPDATE vault_tokens
      SET state = 'used', used_at = ${iso(at)}::timestamptz, used_by_session = ${sessionId}
      WHERE id = ${id} AND state = 'active' AND checkout_session_id = ${sessionId}
      RETURNING ${tokenColumns}`).pipe(Effect.flatMap(firstRecord))

  const releaseToken = (id: string, sessionId: string) =>
    run(sql<{ id: string }>`
      UPDATE vault_tokens
      SET state = 'active', used_at = NULL, used_by_session = NULL
      WHERE id = ${id} AND state = 'used' AND used_by_session = ${sessionId}
      RETURNING id`).pipe(Effect.map((rows) => rows.length === 1))

  const findTokenIdsByFingerprint = (fingerprint: string, limit: number) =>
    limit <= 0
      ? Effect.succeed([])
      : run(sql<{ id: string }>`
          SELECT id FROM vault_tokens WHERE fingerprint = ${fingerprint}
          ORDER BY created_at DESC, id COLLATE "C" DESC
          LIMIT ${Math.floor(limit)}`).pipe(Effect.map((rows) => rows.map((row) => row.id)))

  return VaultStore.of({
    transaction,
    insertToken,
    getToken,
    lockToken,
    markTokenUsed,
    releaseToken,
    findTokenIdsByFingerprint
  })
})

/** `VaultStore` over the `SqlClient` in context (migrated by `src/db/database.ts`). */
export const SqlVaultStore: Layer.Layer<VaultStore, never, SqlClient.SqlClient> = Layer.effect(VaultStore, make)
