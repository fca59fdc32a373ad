/** A session in its `checkout_sessions` row: the wire form's text in `data`, the internal fields in `internal`. */
import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { jsonValue } from "../../db/sql-values.ts"
import { StorageError } from "../../db/storage-error.ts"
import type { SessionJson } from "../checkout-store.ts"
import { SessionStatus } from "../session/schemas.ts"
import { checkoutSessionJson, internalSessionJson, type Session } from "../session/session.ts"

const SESSION_STATUSES: ReadonlySet<unknown> = new Set(SessionStatus.literals)

/** A failure of what the store reads back, not of what it was asked. */
export const storedDataFailure = (message: string) => new StorageError({ reason: "failure", cause: new Error(message) })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Written only by these stores from a typed `Session`: a structural check is enough, not a decode. */
const isStoredSession = (value: unknown): value is Session =>
  isObject(value) &&
  typeof (value as { readonly id?: unknown }).id === "string" &&
  SESSION_STATUSES.has((value as { readonly status?: unknown }).status)

export interface StoredSessionRow {
  readonly data: unknown
  readonly internal: unknown
}

export const sessionFromRow = (
  row: StoredSessionRow | undefined
): Effect.Effect<Option.Option<Session>, StorageError> => {
  if (row === undefined) return Effect.succeed(Option.none())
  let json: unknown
  try {
    const wire = jsonValue(row.data)
    const internal = jsonValue(row.internal)
    // Both are parsed afresh for this read: joining them in place copies nothing.
    json = isObject(wire) && isObject(internal) ? Object.assign(wire, internal) : undefined
  } catch (cause) {
    return Effect.fail(new StorageError({ reason: "failure", cause }))
  }
  return isStoredSession(json)
    ? Effect.succeed(Option.some(json))
    : Effect.fail(storedDataFailure("stored session: not an object with an id and a status"))
}

export const sessionJsonFromRow = (
  row: { readonly status: unknown; readonly expires_at: unknown; readonly json: unknown }
): SessionJson | undefined =>
  SESSION_STATUSES.has(row.status) && typeof row.expires_at === "string" && typeof row.json === "string"
    ? { status: row.status as SessionJson["status"], expires_at: row.expires_at, json: row.json }
    : undefined

/** `data` and `internal`, in that order, as two `json` values. */
export const sessionDocuments = (sql: SqlClient.SqlClient, session: Session) =>
  sql`${checkoutSessionJson(session)}::json, ${internalSessionJson(session)}::json`
