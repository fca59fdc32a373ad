/** Storage of idempotency keys (CONTRACT §6). Times are epoch ms; a record past `expiresAt` is absent everywhere. */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

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
  /** Random per claim; `renewLease`, `complete` and `release` name it, so an owner taken over changes nothing. */
  readonly claimId: string
  readonly now: number
  readonly leaseUntil: number
  readonly expiresAt: number
}

export type ClaimOutcome =
  /** This request owns the key now: run it, then `complete` or `release`. */
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Existing"; readonly record: IdempotencyRecord }

export interface IdempotencyStoreService {
  /** Atomic: `Claimed` unless a live record exists; a dead `in_flight` one with the same fingerprint is taken over. */
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
  readonly release: (scope: IdempotencyScope, claimId: string) => Effect.Effect<boolean, StorageError>
  readonly find: (scope: IdempotencyScope, now: number) => Effect.Effect<Option.Option<IdempotencyRecord>, StorageError>
  /** Deletes up to `limit` expired records (never a claim whose lease runs); safe from several processes. */
  readonly deleteExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
}

export class IdempotencyStore
  extends Context.Tag("acp/IdempotencyStore")<IdempotencyStore, IdempotencyStoreService>()
{}
