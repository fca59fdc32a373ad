/** In-memory `StripeEventsStore` (see `stripe-events-store.ts`): the `stripe_events` table of a `MemoryDatabase`. */
import { Effect, Layer } from "effect"
import {
  type ReceivedStripeEvent,
  StripeEventsStore,
  type StripeEventsStoreService
} from "../../src/stripe/stripe-events-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

export const make: Effect.Effect<StripeEventsStoreService, never, MemoryDatabase> = Effect.map(
  MemoryDatabase,
  (db) => {
    const events = db.table<string, ReceivedStripeEvent>("stripe_events")
    return StripeEventsStore.of({
      transaction: db.transaction,
      has: (id) => db.sync(() => events.has(id)),
      record: (event) =>
        db.sync(() => {
          if (events.has(event.id)) return false
          events.set(event.id, { ...event })
          return true
        })
    })
  }
)

export const MemoryStripeEventsStore: Layer.Layer<StripeEventsStore, never, MemoryDatabase> = Layer.effect(
  StripeEventsStore,
  make
)
