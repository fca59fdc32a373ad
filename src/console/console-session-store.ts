/**
 * Storage of the merchant console's sign-in sessions. A session is found by the SHA-256 of its
 * cookie's random value, never by the cookie itself, so a read of the store opens no session. A
 * session lasts until its `expiresAt`, fixed at sign-in: at that instant and after it is expired,
 * found by nothing, and removed by the sweep (`removeExpired`). Times are epoch ms from the
 * caller's clock. Memory and SQL implementations; the SQL one shares the `SqlClient` with every
 * other store.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface ConsoleSession {
  /** SHA-256 hex of the session cookie's random value: the cookie itself is never stored. */
  readonly tokenHash: string
  /** The synchronizer CSRF token every form of this session carries. */
  readonly csrfToken: string
  /** apiKeyId of the API key used to sign in (src/platform/http/security.ts). */
  readonly keyId: string
  /** Epoch ms. */
  readonly createdAt: number
  /** Epoch ms: expired from this instant on. */
  readonly expiresAt: number
}

export interface ConsoleSessionStoreService {
  /** Stores a new session; a hash already stored fails. */
  readonly create: (session: ConsoleSession) => Effect.Effect<void, StorageError>
  /** The session with this hash, unless it expired at `now` (expiresAt <= now counts as expired). */
  readonly find: (tokenHash: string, now: number) => Effect.Effect<Option.Option<ConsoleSession>, StorageError>
  /** Sign out: removes the session (no-op when absent). */
  readonly remove: (tokenHash: string) => Effect.Effect<void, StorageError>
  /** Removes every session expired at `now`; answers how many. */
  readonly removeExpired: (now: number) => Effect.Effect<number, StorageError>
}

export class ConsoleSessionStore
  extends Context.Tag("acp/ConsoleSessionStore")<ConsoleSessionStore, ConsoleSessionStoreService>()
{}
