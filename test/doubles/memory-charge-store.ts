/** In-memory `ChargeStore`: one map; every operation is a single synchronous step. */
import { Effect, Layer, Option } from "effect"
import { ChargeStore, type ProcessorCharge } from "../../src/payments/charge-store.ts"

export const MemoryChargeStore = Layer.sync(ChargeStore, () => {
  const charges = new Map<string, ProcessorCharge>()
  return {
    findCharge: (key) => Effect.sync(() => Option.fromNullable(charges.get(key))),
    recordCharge: (charge) =>
      Effect.sync(() => {
        const existing = charges.get(charge.idempotencyKey)
        if (existing) return existing
        charges.set(charge.idempotencyKey, charge)
        return charge
      }),
    listCharges: Effect.sync(() => [...charges.values()].sort((a, b) => a.createdAt - b.createdAt))
  }
})
