/** `SessionStore` over SQL; `version` moves on with every write, here and in `sql-checkout-store.ts`. */
import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { statementRunner } from "../../db/statement-runner.ts"
import type { StorageError } from "../../db/storage-error.ts"
import type { SessionJson, SessionStore, VersionedSession } from "../checkout-store.ts"
import { checkoutSessionJson, internalSessionJson, type Session } from "../session/session.ts"
import {
  sessionDocuments,
  sessionFromRow,
  sessionJsonFromRow,
  storedDataFailure,
  type StoredSessionRow
} from "./sql-session-row.ts"

/** The columns an update sets, its version moved on. */
export const sessionAssignments = (sql: SqlClient.SqlClient, session: Session) => {
  const data = checkoutSessionJson(session)
  const internal = internalSessionJson(session)
  return sql`status = ${session.status}, data = ${data}::json, internal = ${internal}::json,
      expires_at = ${session.expires_at}::timestamptz, updated_at = ${session.updated_at}::timestamptz,
      version = version + 1`
}

/** An update that must have matched its row: answers the new version. */
export const updatedVersion = (session: Session) => (rows: ReadonlyArray<{ readonly version: number | string }>) =>
  rows.length === 1
    ? Effect.succeed(Number(rows[0]!.version))
    : Effect.fail(storedDataFailure(`updateSession: no session ${session.id}`))

export const makeSqlSessionStore = (sql: SqlClient.SqlClient): SessionStore => {
  const run = statementRunner(sql)
  const versioned = (rows: ReadonlyArray<StoredSessionRow & { readonly version: number | string }>) =>
    Effect.map(
      sessionFromRow(rows[0]),
      Option.map((session): VersionedSession => ({ session, version: Number(rows[0]!.version) }))
    )

  const get = (id: string) =>
    run(sql<StoredSessionRow>`SELECT data, internal FROM checkout_sessions WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) => sessionFromRow(rows[0]))
    )

  /**
   * The text the service wrote, with the columns every write keeps equal to it: no JSON parsed or
   * built, here or by PostgreSQL (rows migrated by 0020 hold jsonb's text: the same JSON value).
   */
  const getJson = (id: string): Effect.Effect<Option.Option<SessionJson>, StorageError> =>
    run(sql<{ status: unknown; expires_at: unknown; json: unknown }>`
      SELECT status, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at,
             data::text AS json
      FROM checkout_sessions WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) => {
        if (rows[0] === undefined) return Effect.succeed(Option.none())
        const read = sessionJsonFromRow(rows[0])
        return read === undefined
          ? Effect.fail(storedDataFailure("stored session: no known status or no deadline"))
          : Effect.succeed(Option.some(read))
      })
    )

  const list: SessionStore["list"] = (filter) =>
    run(sql<StoredSessionRow>`
      SELECT data, internal FROM checkout_sessions
      WHERE ${filter.status === undefined ? sql`TRUE` : sql`status = ${filter.status}`}
      ORDER BY created_at DESC, id DESC
      LIMIT ${Math.max(0, Math.floor(filter.limit))}`).pipe(
      Effect.flatMap((rows) => Effect.forEach(rows, sessionFromRow)),
      Effect.map((found) => found.flatMap(Option.toArray))
    )

  const lock = (id: string) =>
    run(sql<StoredSessionRow & { version: number | string }>`
      SELECT data, internal, version FROM checkout_sessions WHERE id = ${id} FOR UPDATE`).pipe(
      Effect.flatMap(versioned)
    )

  const insert = (session: Session) =>
    run(sql`
      INSERT INTO checkout_sessions (id, status, data, internal, expires_at, created_at, updated_at, version)
      VALUES (${session.id}, ${session.status}, ${sessionDocuments(sql, session)}, ${session.expires_at}::timestamptz,
              ${session.created_at}::timestamptz, ${session.updated_at}::timestamptz, 1)`).pipe(Effect.asVoid)

  const update = (session: Session) =>
    run(sql<{ version: number | string }>`
      UPDATE checkout_sessions SET ${sessionAssignments(sql, session)}
      WHERE id = ${session.id}
      RETURNING version`).pipe(Effect.flatMap(updatedVersion(session)))

  return { get, getJson, list, lock, insert, update }
}
