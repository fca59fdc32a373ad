import type { SqlError } from "@effect/sql"
import { Data } from "effect"

/** The database could not be reached (→ 503 with Retry-After) or failed unexpectedly (→ 500). */
export class StorageError extends Data.TaggedError("StorageError")<{
  readonly reason: "unavailable" | "failure"
  readonly cause: unknown
}> {
  override get message() {
    return this.reason === "unavailable" ? "storage unavailable" : "storage failure"
  }
}

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  // PostgreSQL SQLSTATEs: admin/crash/cannot-connect-now shutdown, too many connections
  "57P01",
  "57P02",
  "57P03",
  "53300"
])

const CONNECTION_MESSAGES = [
  "connection terminated",
  "failed to acquire connection",
  "connection error",
  "failed to connect",
  "connection timed out",
  "timeout exceeded when trying to connect",
  "client has encountered a connection error",
  "too many connections",
  "not queryable"
]

/** Whether `error` (or anything in its cause chain) says the database could not be reached. */
export const isConnectionProblem = (error: unknown): boolean => {
  const seen = new Set<unknown>()
  const visit = (e: unknown): boolean => {
    if (e === null || typeof e !== "object" || seen.has(e)) return false
    seen.add(e)
    const record = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
    if (typeof record.code === "string" && (CONNECTION_CODES.has(record.code) || /^08[0-9A-Z]{3}$/.test(record.code))) {
      return true
    }
    if (typeof record.message === "string") {
      const message = record.message.toLowerCase()
      if (CONNECTION_MESSAGES.some((m) => message.includes(m))) return true
    }
    if (Array.isArray(record.errors) && record.errors.some(visit)) return true
    return visit(record.cause)
  }
  return visit(error)
}

export const fromSqlError = (error: SqlError.SqlError): StorageError =>
  new StorageError({ reason: isConnectionProblem(error) ? "unavailable" : "failure", cause: error })
