/**
 * In-memory `IdempotencyStore`, for tests: the `idempotency_keys` table of a `MemoryDatabase`, each
 * operation one atomic call. Same semantics as the SQL store.
 */
import { Effect, Layer, Option } from "effect"
import {
  type IdempotencyRecord,
  type IdempotencyScope,
  IdempotencyStore,
  type IdempotencyStoreService,
  type StoredResponse
} from "../../src/idempotency/idempotency-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

type Entry = IdempotencyRecord & { readonly claimId: string }

const keyOf = (scope: IdempotencyScope) => JSON.stringify([scope.keyId, scope.method, scope.path, scope.key])

const copyResponse = (response: StoredResponse): StoredResponse => ({
  status: response.status,
  headers: { ...response.headers },
  body: new Uint8Array(response.body)
})

const publicRecord = (entry: Entry): IdempotencyRecord => {
  const { claimId: _, ...record } = entry
  return record.state === "completed" ? { ...record, response: copyResponse(record.response) } : record
}

const isLive = (entry: Entry, now: number) => entry.expiresAt > now

/** Expired, and not an in-flight claim whose lease still runs. */
const isDeletable = (entry: Entry, now: number) =>
  entry.expiresAt <= now && (entry.state !== "in_flight" || entry.leaseUntil <= now)

export const make: Effect.Effect<IdempotencyStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const entries = db.table<string, Entry>("idempotency_keys")

  const owned = (scope: IdempotencyScope, claimId: string) => {
    const entry = entries.get(keyOf(scope))
    return entry !== undefined && entry.claimId === claimId && entry.state === "in_flight" ? entry : undefined
  }

  return IdempotencyStore.of({
    claim: (scope, request) =>
      db.sync(() => {
        const key = keyOf(scope)
        const existing = entries.get(key)
        const free = existing === undefined ||
          !isLive(existing, request.now) ||
          (existing.state === "in_flight" && existing.leaseUntil <= request.now &&
            existing.fingerprint === request.fingerprint)
        if (!free) return { _tag: "Existing" as const, record: publicRecord(existing) }
        entries.set(key, {
          scope: { ...scope },
          fingerprint: request.fingerprint,
          state: "in_flight",
          claimId: request.claimId,
          createdAt: request.now,
          expiresAt: request.expiresAt,
          leaseUntil: request.leaseUntil
        })
        return { _tag: "Claimed" as const }
      }),

    renewLease: (scope, claimId, leaseUntil) =>
      db.sync(() => {
        const entry = owned(scope, claimId)
        if (entry === undefined || entry.state !== "in_flight") return false
        entries.set(keyOf(scope), { ...entry, leaseUntil, expiresAt: Math.max(entry.expiresAt, leaseUntil) })
        return true
      }),

    complete: (scope, claimId, response, expiresAt) =>
      db.sync(() => {
        const entry = owned(scope, claimId)
        if (entry === undefined) return false
        entries.set(keyOf(scope), {
          scope: entry.scope,
          fingerprint: entry.fingerprint,
          claimId,
          createdAt: entry.createdAt,
          expiresAt,
          state: "completed",
          response: copyResponse(response)
        })
        return true
      }),

    release: (scope, claimId) =>
      db.sync(() => {
        if (owned(scope, claimId) === undefined) return false
        entries.delete(keyOf(scope))
        return true
      }),

    find: (scope, now) =>
      db.sync(() => {
        const entry = entries.get(keyOf(scope))
        return entry !== undefined && isLive(entry, now) ? Option.some(publicRecord(entry)) : Option.none()
      }),

    deleteExpired: (now, limit) =>
      db.sync(() => {
        let deleted = 0
        for (const [key, entry] of [...entries.entries()]) {
          if (deleted >= limit) break
          if (isDeletable(entry, now)) {
            entries.delete(key)
            deleted++
          }
        }
        return deleted
      })
  })
})

/** The memory idempotency store on the `MemoryDatabase` in context. */
export const MemoryIdempotencyStore: Layer.Layer<IdempotencyStore, never, MemoryDatabase> = Layer.effect(
  IdempotencyStore,
  make
)
