/**
 * The `ChargeStore` contract (the built-in processor's charges, keyed by provider idempotency
 * key: the first charge for a key is the only one) on memory, SQL over embedded PGlite, and SQL
 * over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { ChargeStore, type ProcessorCharge } from "../../src/payments/charge-store.ts"
import { SqlChargeStore } from "../../src/payments/store/sql-charge-store.ts"
import { MemoryChargeStore } from "../doubles/memory-charge-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"

const charge = (key: string, overrides: Partial<ProcessorCharge> = {}): ProcessorCharge => ({
  idempotencyKey: key,
  id: `ch_${randomUUID().replaceAll("-", "")}`,
  amount: 123_456,
  currency: "usd",
  outcome: "approved",
  createdAt: Date.parse("2026-11-22T10:11:12.345Z"),
  ...overrides
})

const chargeStoreContract = (name: string, store: Layer.Layer<ChargeStore, unknown>) =>
  layer(Layer.orDie(store))(name, (it) => {
    it.effect("a new key stores the charge and returns it; find returns it too", () =>
      Effect.gen(function*() {
        const charges = yield* ChargeStore
        const first = charge(`cs_${randomUUID()}:1`, { outcome: "insufficient_funds" })
        expect(yield* charges.findCharge(first.idempotencyKey)).toEqual(Option.none())
        expect(yield* charges.recordCharge(first)).toEqual(first)
        expect(yield* charges.findCharge(first.idempotencyKey)).toEqual(Option.some(first))
      }))

    it.effect("a key already charged returns the first charge, whatever the second says", () =>
      Effect.gen(function*() {
        const charges = yield* ChargeStore
        const key = `cs_${randomUUID()}:1`
        const first = charge(key)
        yield* charges.recordCharge(first)
        const second = yield* charges.recordCharge(charge(key, { amount: 1, outcome: "card_declined" }))
        expect(second).toEqual(first)
        expect((yield* charges.listCharges).filter((c) => c.idempotencyKey === key)).toEqual([first])
      }))

    it.effect("concurrent charges of one key: one is stored, every caller gets it", () =>
      Effect.gen(function*() {
        const charges = yield* ChargeStore
        const key = `cs_${randomUUID()}:2`
        const results = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => charge(key, { amount: 100 + i })),
          (c) => charges.recordCharge(c),
          { concurrency: "unbounded" }
        )
        const stored = (yield* charges.listCharges).filter((c) => c.idempotencyKey === key)
        expect(stored).toHaveLength(1)
        for (const result of results) expect(result).toEqual(stored[0])
      }))
  })

chargeStoreContract("ChargeStore: memory", MemoryChargeStore.pipe(Layer.provide(freshMemoryDatabase)))
chargeStoreContract("ChargeStore: SQL on embedded PGlite", SqlChargeStore.pipe(Layer.provideMerge(embeddedDatabase())))
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  chargeStoreContract("ChargeStore: SQL on PostgreSQL", SqlChargeStore.pipe(Layer.provideMerge(postgresDatabase())))
})
