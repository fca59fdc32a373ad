/**
 * Storage of vault tokens (`vt_…`, CONTRACT §7). The card is only an envelope (`model/card-encryption.ts`); in
 * clear only brand, last 4, funding and a keyed fingerprint. `transaction` and the checkout store's join each other.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { AnswerToStore } from "../idempotency/idempotent-answer.ts"
import { optional } from "../shared/schema-helpers.ts"
import { FundingType, RiskSignal, StringMap } from "./model/delegate-payment.ts"

/** Base64 fields (`EncryptedEnvelope`). */
export const CardEnvelope = Schema.Struct({
  key_id: Schema.String,
  iv: Schema.String,
  ciphertext: Schema.String,
  tag: Schema.String
}).annotations({ identifier: "CardEnvelope" })

/** The request's allowance, its `expires_at` as `expiresAt`: an `AllowanceView` (`model/allowance.ts`). */
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
  /** `vt_…`; also the card envelope's additional authenticated data. */
  id: Schema.String,
  /** The (non-secret) id of the creating API key. */
  clientKeyId: Schema.String,
  allowance: TokenAllowance,
  riskSignals: Schema.Array(RiskSignal),
  /** As answered at creation. */
  metadata: StringMap,
  /** Epoch ms. */
  createdAt: Schema.Number,
  card: CardEnvelope,
  /** Keyed hex HMAC of the card (`cardFingerprint`), to find a card's tokens. */
  fingerprint: Schema.String,
  brand: Schema.String,
  last4: Schema.String,
  funding: FundingType,
  state: TokenState,
  /** Epoch ms; set when `state` is `used`. */
  usedAt: optional(Schema.Number),
  /** Set when `state` is `used`. */
  usedBySession: optional(Schema.String)
}).annotations({ identifier: "VaultTokenRecord" })
export type VaultTokenRecord = typeof VaultTokenRecord.Type

export interface VaultStoreService {
  /** Nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** A duplicate id fails; `answer` is stored in the same atomic step (a lost claim stores no token). */
  readonly insertToken: (record: VaultTokenRecord, answer?: AnswerToStore) => Effect.Effect<void, StorageError>
  readonly getToken: (id: string) => Effect.Effect<Option.Option<VaultTokenRecord>, StorageError>
  /** Locks the token for the rest of the transaction. */
  readonly lockToken: (id: string) => Effect.Effect<Option.Option<VaultTokenRecord>, StorageError>
  /**
   * Compare-and-set `active` → `used`, only for the session its allowance names: of concurrent calls one wins, and no
   * session holds another's token even for an instant. The record as stored when this call consumed it, else none.
   */
  readonly markTokenUsed: (
    id: string,
    sessionId: string,
    at: number
  ) => Effect.Effect<Option.Option<VaultTokenRecord>, StorageError>
  /** `used` → `active` for a token `sessionId` holds (its payment declined); false, nothing changed, otherwise. */
  readonly releaseToken: (id: string, sessionId: string) => Effect.Effect<boolean, StorageError>
  /** Newest first. */
  readonly findTokenIdsByFingerprint: (
    fingerprint: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
}

export class VaultStore extends Context.Tag("acp/VaultStore")<VaultStore, VaultStoreService>() {}
