/**
 * The charges of the built-in test processor, keyed by the provider idempotency key: the first
 * charge made for a key is the only one; asking again returns it (CONTRACT §7 "a charge is keyed
 * so that a retry after a crash never charges twice").
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

/**
 * What a key came to. `voided`: no charge was made under the key and none ever will be: the
 * settlement of a payment its request left pending closed it (`PaymentProvider.settleCharge`).
 */
export type ChargeOutcome = "approved" | "card_declined" | "insufficient_funds" | "voided"

export interface ProcessorCharge {
  readonly idempotencyKey: string
  readonly id: string
  readonly amount: number
  readonly currency: string
  readonly outcome: ChargeOutcome
  /** Epoch milliseconds. */
  readonly createdAt: number
  /** The issuer authentication the charge relied on (3-D Secure), if the card needed one. */
  readonly authentication?: { readonly eci: string; readonly dsTransId: string } | undefined
}

export interface ChargeStoreService {
  readonly findCharge: (idempotencyKey: string) => Effect.Effect<Option.Option<ProcessorCharge>, StorageError>
  /** Stores the charge unless one exists for its key; returns the stored one (the first wins). */
  readonly recordCharge: (charge: ProcessorCharge) => Effect.Effect<ProcessorCharge, StorageError>
  /** Every charge, oldest first (for tests and reconciliation). */
  readonly listCharges: Effect.Effect<ReadonlyArray<ProcessorCharge>, StorageError>
}

export class ChargeStore extends Context.Tag("acp/ChargeStore")<ChargeStore, ChargeStoreService>() {}
