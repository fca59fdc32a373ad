/**
 * Storage of delegated payment tokens (`vt_…`), the card vault of CONTRACT §7.
 *
 * A token record holds the allowance, the risk signals, the response metadata and the card as an
 * AES-256-GCM envelope (`model/card-encryption.ts`). In clear there is only what may be:
 * brand, last 4 digits, funding type and a keyed fingerprint. There is no plain card column or
 * field anywhere.
 *
 * Payment side (completing a checkout), inside `transaction`: `markTokenUsed` consumes an active
 * token and answers it as stored, in one step; `lockToken` reads (and locks: SQL
 * `SELECT … FOR UPDATE`) one that is not active. `markTokenUsed` is a compare-and-set from
 * `active` to `used`: of concurrent calls for one token exactly one consumes it, with or without
 * the lock.
 *
 * Transactions: on SQL, `transaction` is `sqlTransaction` on the same `SqlClient` as the
 * checkout store, so a vault transaction inside a checkout-store transaction (or the reverse)
 * joins it (nested calls are savepoints). The memory double (`test/doubles/memory-vault-store.ts`)
 * shares the transactions of the other memory stores in the same way.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { AnswerToStore } from "../idempotency/idempotent-answer.ts"
import { optional } from "../shared/schema-helpers.ts"
import { FundingType, RiskSignal, StringMap } from "./model/delegate-payment.ts"

/** The stored form of the encrypted card (base64 fields; see `EncryptedEnvelope`). */
export const CardEnvelope = Schema.Struct({
  key_id: Schema.String,
  iv: Schema.String,
  ciphertext: Schema.String,
  tag: Schema.String
}).annotations({ identifier: "CardEnvelope" })

/**
 * What the token may be used for: the request's allowance, with `expires_at` parsed to epoch
 * milliseconds as `expiresAt`. The shape matches `AllowanceView` of `src/delegate-payment/model/allowance.ts`.
 */
export const TokenAllowance = Schema.Struct({
  reason: Schema.Literal("one_time"),
  max_amount: Schema.Number,
  currency: Schema.String,
  checkout_session_id: Schema.String,
  merchant_id: Schema.String,
  /** Epoch ms: the token may be used while `now < expiresAt`. */
  expiresAt: Schema.Number
}).annotations({ identifier: "TokenAllowance" })
export type TokenAllowance = typeof TokenAllowance.Type

export const TokenState = Schema.Literal("active", "used")
export type TokenState = typeof TokenState.Type

export const VaultTokenRecord = Schema.Struct({
  /** `vt_…`; also the additional authenticated data of the card envelope. */
  id: Schema.String,
  /** The (non-secret) id of the API key that created the token. */
  clientKeyId: Schema.String,
  allowance: TokenAllowance,
  riskSignals: Schema.Array(RiskSignal),
  /** The metadata returned at creation (request metadata + merchant_id + idempotency_key). */
  metadata: StringMap,
  /** Epoch ms. */
  createdAt: Schema.Number,
  card: CardEnvelope,
  /** Hex HMAC-SHA256 of the card under the vault's fingerprint key (duplicate detection). */
  fingerprint: Schema.String,
  brand: Schema.String,
  last4: Schema.String,
  funding: FundingType,
  state: TokenState,
  /** Epoch ms; set when `state` is `used`. */
  usedAt: optional(Schema.Number),
  /** The checkout session that consumed the token; set when `state` is `used`. */
  usedBySession: optional(Schema.String)
}).annotations({ identifier: "VaultTokenRecord" })
export type VaultTokenRecord = typeof VaultTokenRecord.Type

export interface VaultStoreService {
  /** Runs `effect` atomically (see the module comment); nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /**
   * Stores a new token; a duplicate id fails with `StorageError` "failure". With `answer`, stores
   * it too, in the same atomic step (a lost claim fails it and stores no token).
   */
  readonly insertToken: (record: VaultTokenRecord, answer?: AnswerToStore) => Effect.Effect<void, StorageError>
  /** Reads a token without locking. */
  readonly getToken: (id: string) => Effect.Effect<Option.Option<VaultTokenRecord>, StorageError>
  /** Reads and locks a token for the rest of the transaction (`SELECT … FOR UPDATE`). */
  readonly lockToken: (id: string) => Effect.Effect<Option.Option<VaultTokenRecord>, StorageError>
  /**
   * Consumes an active token issued for `sessionId` (its allowance names that session): `active`
   * → `used`, recording when and by which session. The record as now stored when this call
   * consumed it; None when the token is unknown, already used or issued for another session
   * (nothing changes): no session can hold another's token, even for an instant outside a
   * transaction.
   */
  readonly markTokenUsed: (
    id: string,
    sessionId: string,
    at: number
  ) => Effect.Effect<Option.Option<VaultTokenRecord>, StorageError>
  /**
   * Gives back a token held by `sessionId` whose payment was declined: `used` → `active`. `true`
   * when it did; `false` when the token is not used by that session (nothing changes).
   */
  readonly releaseToken: (id: string, sessionId: string) => Effect.Effect<boolean, StorageError>
  /** Ids of tokens of the same card (same fingerprint), newest first, at most `limit`. */
  readonly findTokenIdsByFingerprint: (
    fingerprint: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
}

export class VaultStore extends Context.Tag("acp/VaultStore")<VaultStore, VaultStoreService>() {}
