/**
 * In-memory `AuthenticationStore`, for tests: the `authentication_sessions` table of a
 * `MemoryDatabase`, each operation one atomic call. Same semantics as the SQL store.
 */
import { Effect, Layer, Option } from "effect"
import {
  AuthenticationStore,
  type AuthenticationStoreService
} from "../../src/delegate-authentication/authentication-store.ts"
import type { AuthenticationSession } from "../../src/delegate-authentication/model/authentication-session.ts"
import { MemoryDatabase, storageFailure } from "./memory-database.ts"

export const make: Effect.Effect<AuthenticationStoreService, never, MemoryDatabase> = Effect.map(
  MemoryDatabase,
  (db) => {
    const sessions = db.table<string, AuthenticationSession>("authentication_sessions")
    const byDsTransId = (dsTransId: string) => [...sessions.values()].find((s) => s.dsTransId === dsTransId)
    return AuthenticationStore.of({
      transaction: db.transaction,
      insert: (session) =>
        db.atomic(() => {
          if (sessions.has(session.id) || byDsTransId(session.dsTransId) !== undefined) {
            return Effect.fail(storageFailure(`duplicate authentication session ${session.id}`))
          }
          sessions.set(session.id, { ...session })
          return Effect.void
        }),
      get: (id) => db.sync(() => Option.fromNullable(sessions.get(id))),
      findByDsTransId: (dsTransId) => db.sync(() => Option.fromNullable(byDsTransId(dsTransId))),
      update: (session, expected) =>
        db.sync(() => {
          const stored = sessions.get(session.id)
          if (
            stored === undefined || stored.status !== expected.status || stored.action !== expected.action
          ) return false
          sessions.set(session.id, { ...session })
          return true
        }),
      markUsed: (id, checkoutSessionId) =>
        db.sync(() => {
          const stored = sessions.get(id)
          if (stored === undefined) return false
          if (stored.usedBySession !== undefined && stored.usedBySession !== checkoutSessionId) return false
          sessions.set(id, { ...stored, usedBySession: checkoutSessionId })
          return true
        })
    })
  }
)

export const MemoryAuthenticationStore: Layer.Layer<AuthenticationStore, never, MemoryDatabase> = Layer.effect(
  AuthenticationStore,
  make
)
