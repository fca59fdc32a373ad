/** In-memory `ChargeStore`: the `processor_charges` table of a `MemoryDatabase`, by idempotency key. */
import { Effect, Layer, Option } from "effect"
import { ChargeStore, type ProcessorCharge } from "../../src/payments/charge-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

export const MemoryChargeStore: Layer.Layer<ChargeStore, never, MemoryDatabase> = Layer.effect(
  ChargeStore,
  Effect.map(MemoryDatabase, (db) => {
    const charges = db.table<string, ProcessorCharge>("processor_charges")
    return ChargeStore.of({
      findCharge: (key) => db.sync(() => Option.fromNullable(charges.get(key))),
      recordCharge: (charge) =>
        db.sync(() => {
          const existing = charges.get(charge.idempotencyKey)
          if (existing) return existing
          charges.set(charge.idempotencyKey, charge)
          return charge
        }),
      listCharges: db.sync(() => [...charges.values()].sort((a, b) => a.createdAt - b.createdAt))
    })
  })
)
