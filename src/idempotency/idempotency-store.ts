/**
 * Storage of idempotency keys (CONTRACT §6): one record per (API key id, method, path, key).
 *
 * A request first *claims* its key: the claim is one atomic step (in PostgreSQL a single
 * `INSERT … ON CONFLICT … DO UPDATE … WHERE`), so of any number of concurrent requests, in any
 * number of processes sharing the database, exactly one gets the claim. The claim is `in_flight`
 * with a lease; its owner then either stores the result (`completed`) or releases the key.
 *
 * Every claim carries a random `claimId`. Completing, releasing and renewing name it, so an owner
 * whose lease was taken over (it was presumed dead) can no longer overwrite the new owner's record.
 *
 * Times are epoch milliseconds from the caller's Clock. A record whose `expiresAt` has passed is
 * treated as absent everywhere; `deleteExpired` removes such records for good.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

/** What a key is unique within: the caller's API key id, the method and the path. */
export interface IdempotencyScope {
  readonly keyId: string
  readonly method: string
  readonly path: string
  readonly key: string
}

/** A stored response, replayed as is (headers lower-case; never Request-Id). */
export interface StoredResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

interface RecordCommon {
  readonly scope: IdempotencyScope
  /** Keyed fingerprint of the request body (see `requestFingerprint`); the body itself is never stored. */
  readonly fingerprint: string
  readonly createdAt: number
  readonly expiresAt: number
}

export type IdempotencyRecord =
  | (RecordCommon & { readonly state: "in_flight"; readonly leaseUntil: number })
  | (RecordCommon & { readonly state: "completed"; readonly response: StoredResponse })

export interface ClaimRequest {
  readonly fingerprint: string
  /** Random, unique per claim attempt. */
  readonly claimId: string
  readonly now: number
  readonly leaseUntil: number
  readonly expiresAt: number
}

export type ClaimOutcome =
  /** This request owns the key now: run it, then `complete` or `release`. */
  | { readonly _tag: "Claimed" }
  /** A live record exists (completed, or in flight under a lease that has not run out). */
  | { readonly _tag: "Existing"; readonly record: IdempotencyRecord }

export interface IdempotencyStoreService {
  /**
   * Claims the key atomically. Succeeds with `Claimed` when no live record exists: none at all, an
   * expired one (`expiresAt <= now`), or an `in_flight` one with the same fingerprint whose lease
   * ran out (`leaseUntil <= now`: its owner is presumed dead, and this request takes over).
   * Otherwise returns the live record.
   */
  readonly claim: (scope: IdempotencyScope, request: ClaimRequest) => Effect.Effect<ClaimOutcome, StorageError>
  /** Extends the lease of our claim (and keeps `expiresAt` at or after it); false if the claim is lost. */
  readonly renewLease: (
    scope: IdempotencyScope,
    claimId: string,
    leaseUntil: number
  ) => Effect.Effect<boolean, StorageError>
  /** Stores the result of our claim; false (and nothing written) if the claim is lost. */
  readonly complete: (
    scope: IdempotencyScope,
    claimId: string,
    response: StoredResponse,
    expiresAt: number
  ) => Effect.Effect<boolean, StorageError>
  /** Deletes our claim so a retry runs again; false if the claim is lost. */
  readonly release: (scope: IdempotencyScope, claimId: string) => Effect.Effect<boolean, StorageError>
  /** The live record of a key at `now`, if any. */
  readonly find: (scope: IdempotencyScope, now: number) => Effect.Effect<Option.Option<IdempotencyRecord>, StorageError>
  /**
   * Deletes at most `limit` records expired at `now` (never an in-flight claim whose lease still
   * runs); returns how many. Safe to run from several processes at once.
   */
  readonly deleteExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
}

export class IdempotencyStore
  extends Context.Tag("acp/IdempotencyStore")<IdempotencyStore, IdempotencyStoreService>()
{}
