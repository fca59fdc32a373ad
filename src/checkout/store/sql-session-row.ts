/**
 * How the SQL checkout stores keep a session in its `checkout_sessions` row: its wire form as JSON
 * text in `data` (`checkoutSessionJson`), the fields the wire form lacks in `internal`
 * (`internalSessionJson`), `status`, `expires_at`, `created_at`, `updated_at` and `version` in
 * columns of their own; read back as the two objects joined, with a structural check instead of a
 * schema decode.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { jsonValue } from "../../db/sql-values.ts"
import { StorageError } from "../../db/storage-error.ts"
import type { SessionJson } from "../checkout-store.ts"
import { SessionStatus } from "../session/schemas.ts"
import { checkoutSessionJson, internalSessionJson, type Session } from "../session/session.ts"

const SESSION_STATUSES: ReadonlySet<unknown> = new Set(SessionStatus.literals)

/** A failure of what the store reads back (not what it was asked). */
export const storedDataFailure = (message: string) => new StorageError({ reason: "failure", cause: new Error(message) })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A stored session. The JSON is written only by these stores, from an already typed `Session`
 * (`checkoutSessionJson`, `internalSessionJson`), so a full schema decode on every read would
 * only re-check what was checked before writing: a structural check that it is what they write
 * (an object with a string `id` and a known `status`) is enough.
 */
const isStoredSession = (value: unknown): value is Session =>
  isObject(value) &&
  typeof (value as { readonly id?: unknown }).id === "string" &&
  SESSION_STATUSES.has((value as { readonly status?: unknown }).status)

/** The columns a stored session is read from. */
export interface StoredSessionRow {
  readonly data: unknown
  readonly internal: unknown
}

/** The session of a row's `data` and `internal`, or none without a row. */
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

/** A row of `getJson`: what a stored session's status and deadline must be to be answered. */
export const sessionJsonFromRow = (
  row: { readonly status: unknown; readonly expires_at: unknown; readonly json: unknown }
): SessionJson | undefined =>
  SESSION_STATUSES.has(row.status) && typeof row.expires_at === "string" && typeof row.json === "string"
    ? { status: row.status as SessionJson["status"], expires_at: row.expires_at, json: row.json }
    : undefined

/**
 * What a write puts in `data` and `internal`, in that order, as SQL values: a session's wire form
 * and its internal fields as two `json` texts.
 */
export const sessionDocuments = (sql: SqlClient.SqlClient, session: Session) =>
  sql`${checkoutSessionJson(session)}::json, ${internalSessionJson(session)}::json`
