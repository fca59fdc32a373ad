/**
 * In-memory `ConsoleSessionStore`, for tests: the `console_sessions` table of a `MemoryDatabase`,
 * each operation one atomic call. Same semantics as the SQL store (a duplicate hash fails).
 */
import { Effect, Layer, Option } from "effect"
import {
  type ConsoleSession,
  ConsoleSessionStore,
  type ConsoleSessionStoreService
} from "../../src/console/console-session-store.ts"
import { MemoryDatabase, storageFailure } from "./memory-database.ts"

export const make: Effect.Effect<ConsoleSessionStoreService, never, MemoryDatabase> = Effect.map(
  MemoryDatabase,
  (db) => {
    const sessions = db.table<string, ConsoleSession>("console_sessions")
    return ConsoleSessionStore.of({
      create: (session) =>
        db.atomic(() => {
          if (sessions.has(session.tokenHash)) return Effect.fail(storageFailure("duplicate console session"))
          sessions.set(session.tokenHash, { ...session })
          return Effect.void
        }),
      find: (tokenHash, now) =>
        db.sync(() =>
          Option.map(
            Option.filter(Option.fromNullable(sessions.get(tokenHash)), (session) => session.expiresAt > now),
            (session) => ({ ...session })
          )
        ),
      remove: (tokenHash) => db.sync(() => sessions.delete(tokenHash)),
      removeExpired: (now) =>
        db.sync(() => {
          const expired = [...sessions.entries()].filter(([, session]) => session.expiresAt <= now)
          for (const [tokenHash] of expired) sessions.delete(tokenHash)
          return expired.length
        })
    })
  }
)

/** The memory console session store on the `MemoryDatabase` in context. */
export const MemoryConsoleSessionStore: Layer.Layer<ConsoleSessionStore, never, MemoryDatabase> = Layer.effect(
  ConsoleSessionStore,
  make
)
