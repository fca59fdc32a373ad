/**
 * The merchant console's sign-in sessions, found by the SHA-256 of the cookie's random value, never by
 * the cookie itself, so a read of the store opens no session. Times are epoch ms of the caller's clock.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface ConsoleSession {
  readonly tokenHash: string
  /** The synchronizer CSRF token every form of this session carries. */
  readonly csrfToken: string
  /** apiKeyId of the API key used to sign in (src/platform/http/security.ts). */
  readonly keyId: string
  readonly createdAt: number
  /** Fixed at sign-in; expired from this instant on. */
  readonly expiresAt: number
}

export interface ConsoleSessionStoreService {
  /** Stores a new session; a hash already stored fails. */
  readonly create: (session: ConsoleSession) => Effect.Effect<void, StorageError>
  readonly find: (tokenHash: string, now: number) => Effect.Effect<Option.Option<ConsoleSession>, StorageError>
  readonly remove: (tokenHash: string) => Effect.Effect<void, StorageError>
  readonly removeExpired: (now: number) => Effect.Effect<number, StorageError>
}

export class ConsoleSessionStore
  extends Context.Tag("acp/ConsoleSessionStore")<ConsoleSessionStore, ConsoleSessionStoreService>()
{}
