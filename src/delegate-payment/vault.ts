/**
 * The delegate payment vault (CONTRACT §7, `docs/payments.md`): a validated card into a `vt_` token, and the card
 * opened again for the payment processor. Nothing here logs card data, and no error carries it.
 */
import { Clock, Context, Data, Effect, Either, Layer, Redacted, Schema } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { writeWithAnswer } from "../idempotency/idempotent-answer.ts"
import { AppConfig } from "../platform/config.ts"
import { Ids } from "../platform/ids.ts"
import { deriveVaultKeys, type VaultKeyError } from "../platform/key-derivation.ts"
import { optional } from "../shared/schema-helpers.ts"
import { cardFingerprint, decryptCard, encryptCard } from "./model/card-encryption.ts"
import type { DelegatePaymentResponse } from "./model/delegate-payment.ts"
import { DelegateAddress } from "./model/delegate-payment.ts"
import type { ValidatedDelegatePayment } from "./model/validation.ts"
import { VaultStore, type VaultTokenRecord } from "./vault-store.ts"

/** The card inside the envelope. Never log it. */
export const RevealedCard = Schema.Struct({
  card_number_type: Schema.Literal("fpan", "network_token"),
  number: Schema.String,
  exp_month: optional(Schema.String),
  exp_year: optional(Schema.String),
  name: optional(Schema.String),
  cvc: optional(Schema.String),
  cryptogram: optional(Schema.String),
  eci_value: optional(Schema.String),
  billing_address: optional(DelegateAddress)
})
export type RevealedCard = typeof RevealedCard.Type

const decodeRevealedCard = Schema.decodeUnknownEither(RevealedCard)

export interface TokenizeContext {
  /** The caller's `CurrentClient.keyId`. */
  readonly clientKeyId: string
  /** The request's `Idempotency-Key`, echoed in the metadata when given. */
  readonly idempotencyKey?: string
}

/** `VaultDecryptError`'s reasons (`malformed` also for content that is no card); no card or key material. */
export class CardUnreadable extends Data.TaggedError("CardUnreadable")<{
  readonly tokenId: string
  readonly reason: "unknown_key" | "malformed" | "authentication_failed"
}> {
  override get message(): string {
    return `the card of token ${this.tokenId} cannot be read: ${this.reason}`
  }
}

export interface VaultService {
  /** The 201 body. */
  readonly tokenize: (
    payment: ValidatedDelegatePayment,
    context: TokenizeContext
  ) => Effect.Effect<DelegatePaymentResponse, StorageError>
  /** For the payment processor only; never log the result. */
  readonly revealCard: (record: VaultTokenRecord) => Effect.Effect<RevealedCard, CardUnreadable>
}

export class Vault extends Context.Tag("acp/Vault")<Vault, VaultService>() {}

export interface VaultKeyOptions {
  /** Base64 of 32 bytes; new cards are encrypted with it. */
  readonly vaultKey: Redacted.Redacted<string>
  /** Still open the envelopes they encrypted (key rotation). */
  readonly retiredVaultKeys?: ReadonlyArray<Redacted.Redacted<string>>
}

export const makeVault = Effect.fnUntraced(function*(
  options: VaultKeyOptions
): Effect.fn.Return<VaultService, VaultKeyError, VaultStore | Ids> {
  const store = yield* VaultStore
  const ids = yield* Ids
  const current = yield* Either.match(deriveVaultKeys(Redacted.value(options.vaultKey)), {
    onLeft: Effect.fail,
    onRight: Effect.succeed
  })
  const ring = new Map<string, Buffer>([[current.keyId, current.encryptionKey]])
  for (const retired of options.retiredVaultKeys ?? []) {
    const keys = yield* Either.match(deriveVaultKeys(Redacted.value(retired)), {
      onLeft: Effect.fail,
      onRight: Effect.succeed
    })
    if (!ring.has(keys.keyId)) ring.set(keys.keyId, keys.encryptionKey)
  }

  const tokenize: VaultService["tokenize"] = Effect.fnUntraced(function*(payment, context) {
    const { request } = payment
    const card = request.payment_method
    const id = yield* ids.make("vt_")
    const now = yield* Clock.currentTimeMillis
    const secret: RevealedCard = {
      card_number_type: card.card_number_type,
      number: card.number,
      ...(card.exp_month !== undefined ? { exp_month: card.exp_month } : {}),
      ...(card.exp_year !== undefined ? { exp_year: card.exp_year } : {}),
      ...(card.name !== undefined ? { name: card.name } : {}),
      ...(card.cvc !== undefined ? { cvc: card.cvc } : {}),
      ...(card.cryptogram !== undefined ? { cryptogram: card.cryptogram } : {}),
      ...(card.eci_value !== undefined ? { eci_value: card.eci_value } : {}),
      ...(request.billing_address !== undefined ? { billing_address: request.billing_address } : {})
    }
    const envelope = encryptCard({ id: current.keyId, key: current.encryptionKey }, secret, id)
    // `merchant_id` and `idempotency_key` are ours (CONTRACT §7), never the client's metadata under those names.
    const { idempotency_key: _notTheHeader, ...given } = request.metadata
    const metadata: Record<string, string> = {
      ...given,
      merchant_id: request.allowance.merchant_id,
      ...(context.idempotencyKey !== undefined ? { idempotency_key: context.idempotencyKey } : {})
    }
    const record: VaultTokenRecord = {
      id,
      clientKeyId: context.clientKeyId,
      allowance: {
        reason: request.allowance.reason,
        max_amount: request.allowance.max_amount,
        currency: request.allowance.currency,
        checkout_session_id: request.allowance.checkout_session_id,
        merchant_id: request.allowance.merchant_id,
        expiresAt: payment.expiresAtMillis
      },
      riskSignals: request.risk_signals,
      metadata,
      createdAt: now,
      card: envelope,
      fingerprint: cardFingerprint(current.fingerprintKey, card.number, card.exp_month, card.exp_year),
      brand: payment.brand,
      last4: payment.last4,
      funding: payment.fundingType,
      state: "active"
    }
    const response: DelegatePaymentResponse = { id, created: new Date(now).toISOString(), metadata }
    // A keyed request's answer goes in the token's own statement: no transaction around it.
    yield* writeWithAnswer(
      (answer) => Effect.as(store.insertToken(record, answer), true),
      Either.right(response)
    )
    yield* Effect.logDebug("card tokenized").pipe(
      Effect.annotateLogs({ token_id: id, brand: record.brand, last4: record.last4, client: context.clientKeyId })
    )
    return response
  })

  const revealCard: VaultService["revealCard"] = (record) =>
    Effect.suspend(() => {
      const opened = decryptCard(ring, record.card, record.id)
      if (Either.isLeft(opened)) {
        return Effect.fail(new CardUnreadable({ tokenId: record.id, reason: opened.left.reason }))
      }
      const decoded = decodeRevealedCard(opened.right)
      return Either.isRight(decoded)
        ? Effect.succeed(decoded.right)
        : Effect.fail(new CardUnreadable({ tokenId: record.id, reason: "malformed" }))
    })

  return Vault.of({ tokenize, revealCard })
})

export const VaultLive: Layer.Layer<Vault, VaultKeyError, AppConfig | VaultStore | Ids> = Layer.effect(
  Vault,
  Effect.flatMap(
    AppConfig,
    (config) => makeVault({ vaultKey: config.vaultKey, retiredVaultKeys: config.retiredVaultKeys })
  )
)
