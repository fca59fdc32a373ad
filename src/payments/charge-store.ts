/** The built-in processor's charges by idempotency key: a key's first charge is its only one (CONTRACT §7). */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

/** `voided`: no charge was made under the key and none ever will be (`PaymentProvider.settleCharge` closed it). */
export type ChargeOutcome = "approved" | "card_declined" | "insufficient_funds" | "voided"

export interface ProcessorCharge {
  readonly idempotencyKey: string
  readonly id: string
  readonly amount: number
  readonly currency: string
  readonly outcome: ChargeOutcome
  /** Epoch ms. */
  readonly createdAt: number
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
