/**
 * Storage of issuer authentication sessions (the Delegate Authentication API's provider side).
 * A session is written whole; each step is a compare-and-set on the status it was decided on, so
 * of two concurrent steps on one session exactly one applies. Memory and SQL implementations;
 * the SQL one shares the `SqlClient` (and so its transactions) with every other store.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { AuthenticationSession, AuthenticationStatus } from "./model/authentication-session.ts"

export interface AuthenticationStoreService {
  /** Runs `effect` atomically; nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** Inserts a new session; a duplicate id or directory-server transaction id fails. */
  readonly insert: (session: AuthenticationSession) => Effect.Effect<void, StorageError>
  readonly get: (id: string) => Effect.Effect<Option.Option<AuthenticationSession>, StorageError>
  /** The session whose directory-server transaction id is `dsTransId` (what a payment presents). */
  readonly findByDsTransId: (dsTransId: string) => Effect.Effect<Option.Option<AuthenticationSession>, StorageError>
  /**
   * Stores `session` if the stored one is still `expected` (status and action); false, and
   * nothing written, otherwise.
   */
  readonly update: (
    session: AuthenticationSession,
    expected: { readonly status: AuthenticationStatus; readonly action: AuthenticationSession["action"] }
  ) => Effect.Effect<boolean, StorageError>
  /**
   * Marks the session's result used by the checkout session `checkoutSessionId`, if it is unused
   * or already used by that checkout session (a retry of its payment); false otherwise.
   */
  readonly markUsed: (id: string, checkoutSessionId: string) => Effect.Effect<boolean, StorageError>
}

export class AuthenticationStore
  extends Context.Tag("acp/AuthenticationStore")<AuthenticationStore, AuthenticationStoreService>()
{}
