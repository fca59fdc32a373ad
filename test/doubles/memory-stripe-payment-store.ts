/** In-memory `StripePaymentStore`: the `stripe_payments` table of a `MemoryDatabase`, by attempt key. */
import { Effect, Layer, Option } from "effect"
import { type StripePayment, StripePaymentStore } from "../../src/stripe/stripe-payment-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

export const MemoryStripePaymentStore: Layer.Layer<StripePaymentStore, never, MemoryDatabase> = Layer.effect(
  StripePaymentStore,
  Effect.map(MemoryDatabase, (db) => {
    const payments = db.table<string, StripePayment>("stripe_payments")
    return StripePaymentStore.of({
      find: (key) => db.sync(() => Option.fromNullable(payments.get(key))),
      claim: ({ key, now, sessionId, state }) =>
        db.sync(() => {
          const existing = payments.get(key)
          if (existing) return existing
          const stored: StripePayment = {
            key,
            sessionId,
            paymentIntentId: undefined,
            state,
            createdAt: now,
            updatedAt: now
          }
          payments.set(key, stored)
          return stored
        }),
      recordIntent: (key, paymentIntentId, now) =>
        db.sync(() => {
          const existing = payments.get(key)
          if (existing === undefined || existing.paymentIntentId !== undefined) return Option.fromNullable(existing)
          const stored = { ...existing, paymentIntentId, updatedAt: now }
          payments.set(key, stored)
          return Option.some(stored)
        }),
      markVoided: (key, now) =>
        db.sync(() => {
          const existing = payments.get(key)
          if (existing !== undefined && existing.state !== "voided") {
            payments.set(key, { ...existing, state: "voided", updatedAt: now })
          }
        })
    })
  })
)
