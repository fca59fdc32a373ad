/**
 * Storage of issuer authentication sessions, written whole. Each step is a compare-and-set on the status it was decided
 * on, so of two concurrent steps exactly one applies. The SQL store shares its transactions with every other store.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { AuthenticationSession, AuthenticationStatus } from "./model/authentication-session.ts"

export interface AuthenticationStoreService {
  /** Nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** Inserts a new session; a duplicate id or directory-server transaction id fails. */
  readonly insert: (session: AuthenticationSession) => Effect.Effect<void, StorageError>
  readonly get: (id: string) => Effect.Effect<Option.Option<AuthenticationSession>, StorageError>
  /** The session whose directory-server transaction id is `dsTransId` (what a payment presents). */
  readonly findByDsTransId: (dsTransId: string) => Effect.Effect<Option.Option<AuthenticationSession>, StorageError>
  /** Stores `session` if the stored one is still `expected`; false, and nothing written, otherwise. */
  readonly update: (
    session: AuthenticationSession,
    expected: { readonly status: AuthenticationStatus; readonly action: AuthenticationSession["action"] }
  ) => Effect.Effect<boolean, StorageError>
  /** Marks the result used by `checkoutSessionId` unless another checkout session used it (then false). */
  readonly markUsed: (id: string, checkoutSessionId: string) => Effect.Effect<boolean, StorageError>
}

export class AuthenticationStore
  extends Context.Tag("acp/AuthenticationStore")<AuthenticationStore, AuthenticationStoreService>()
{}
