/**
 * The Stripe payments this service started, by payment attempt key: which PaymentIntent the attempt's
 * charge made (so that a retry, or the settlement, finds it instead of making another) and whether the
 * key was closed before any charge (`voided`: a late request under it is refused, never charged).
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface StripePayment {
  /** The payment attempt's idempotency key (`<session id>:<sequence>`). */
  readonly key: string
  readonly sessionId: string
  /** Set once, by the first request that learned it; the attempt's only PaymentIntent. */
  readonly paymentIntentId: string | undefined
  /** `voided`: the settlement closed the key; no PaymentIntent under it can be charged. */
  readonly state: "open" | "voided"
  /** Epoch ms. */
  readonly createdAt: number
  readonly updatedAt: number
}

export interface StripePaymentStoreService {
  readonly find: (key: string) => Effect.Effect<Option.Option<StripePayment>, StorageError>
  /** Inserts the key in `state` unless it has a row; returns the stored row (the first wins). */
  readonly claim: (
    payment: {
      readonly key: string
      readonly sessionId: string
      readonly state: "open" | "voided"
      readonly now: number
    }
  ) => Effect.Effect<StripePayment, StorageError>
  /** Records the PaymentIntent unless one is recorded; the stored row, none if the key has no row. */
  readonly recordIntent: (
    key: string,
    paymentIntentId: string,
    now: number
  ) => Effect.Effect<Option.Option<StripePayment>, StorageError>
  /** Closes the key (its PaymentIntent was canceled, or there is none). */
  readonly markVoided: (key: string, now: number) => Effect.Effect<void, StorageError>
}

export class StripePaymentStore extends Context.Tag("acp/StripePaymentStore")<
  StripePaymentStore,
  StripePaymentStoreService
>() {}
