/**
 * `ConsoleSessionStore` over PostgreSQL (`console_sessions`, migration 0018). Expiry is compared with the
 * caller's `now`, never the database's clock, so every process and test agrees on it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { iso, millis } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { type ConsoleSession, ConsoleSessionStore, type ConsoleSessionStoreService } from "../console-session-store.ts"

interface Row {
  readonly token_hash: string
  readonly csrf_token: string
  readonly key_id: string
  readonly created_ms: number | string
  readonly expires_ms: number | string
}

const fromRow = (row: Row): ConsoleSession => ({
  tokenHash: row.token_hash,
  csrfToken: row.csrf_token,
  keyId: row.key_id,
  createdAt: millis(row.created_ms),
  expiresAt: millis(row.expires_ms)
})

export const make: Effect.Effect<ConsoleSessionStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)

  return ConsoleSessionStore.of({
    create: (session) =>
      run(sql`
        INSERT INTO console_sessions (token_hash, csrf_token, key_id, created_at, expires_at)
        VALUES (${session.tokenHash}, ${session.csrfToken}, ${session.keyId},
                ${iso(session.createdAt)}::timestamptz, ${iso(session.expiresAt)}::timestamptz)`).pipe(Effect.asVoid),
    find: (tokenHash, now) =>
      run(sql<Row>`
        SELECT token_hash, csrf_token, key_id,
               (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
               (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms
        FROM console_sessions
        WHERE token_hash = ${tokenHash} AND expires_at > ${iso(now)}::timestamptz`).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow))
      ),
    remove: (tokenHash) => run(sql`DELETE FROM console_sessions WHERE token_hash = ${tokenHash}`).pipe(Effect.asVoid),
    removeExpired: (now) =>
      run(sql<{ removed: number | string }>`
        WITH removed AS (
          DELETE FROM console_sessions WHERE expires_at <= ${iso(now)}::timestamptz RETURNING 1
        )
        SELECT count(*)::int AS removed FROM removed`).pipe(Effect.map((rows) => Number(rows[0]?.removed ?? 0)))
  })
})

export const SqlConsoleSessionStore: Layer.Layer<ConsoleSessionStore, never, SqlClient.SqlClient> = Layer.effect(
  ConsoleSessionStore,
  make
)
