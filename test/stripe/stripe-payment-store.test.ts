/**
 * The `StripePaymentStore` contract (a payment attempt key's PaymentIntent, or the key closed before
 * one: the first record of a key wins) on memory, SQL over embedded PGlite, and SQL over PostgreSQL
 * (only when `TEST_DATABASE_URL` is set).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { SqlStripePaymentStore } from "../../src/stripe/store/sql-stripe-payment-store.ts"
import { StripePaymentStore } from "../../src/stripe/stripe-payment-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryStripePaymentStore } from "../doubles/memory-stripe-payment-store.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"

const NOW = Date.parse("2026-11-22T10:11:12.345Z")
const key = () => `cs_${randomUUID().replaceAll("-", "")}:1`
const sessionOf = (k: string) => k.split(":")[0]!

const contract = (name: string, store: Layer.Layer<StripePaymentStore, unknown>) =>
  layer(Layer.orDie(store))(name, (it) => {
    it.effect("a new key is stored open with no PaymentIntent; the first claim wins", () =>
      Effect.gen(function*() {
        const payments = yield* StripePaymentStore
        const k = key()
        expect(yield* payments.find(k)).toEqual(Option.none())
        const opened = yield* payments.claim({ key: k, sessionId: sessionOf(k), state: "open", now: NOW })
        expect(opened).toEqual({
          key: k,
          sessionId: sessionOf(k),
          paymentIntentId: undefined,
          state: "open",
          createdAt: NOW,
          updatedAt: NOW
        })
        expect(yield* payments.claim({ key: k, sessionId: sessionOf(k), state: "voided", now: NOW + 5 })).toEqual(
          opened
        )
        expect(yield* payments.find(k)).toEqual(Option.some(opened))
      }))

    it.effect("the PaymentIntent is recorded once; voiding keeps it", () =>
      Effect.gen(function*() {
        const payments = yield* StripePaymentStore
        const k = key()
        expect(yield* payments.recordIntent(k, "pi_none", NOW)).toEqual(Option.none())
        yield* payments.claim({ key: k, sessionId: sessionOf(k), state: "open", now: NOW })
        const first = `pi_${randomUUID().replaceAll("-", "")}`
        const recorded = yield* payments.recordIntent(k, first, NOW + 1)
        expect(Option.map(recorded, (p) => [p.paymentIntentId, p.updatedAt])).toEqual(Option.some([first, NOW + 1]))
        const again = yield* payments.recordIntent(k, `pi_${randomUUID().replaceAll("-", "")}`, NOW + 2)
        expect(Option.map(again, (p) => p.paymentIntentId)).toEqual(Option.some(first))
        yield* payments.markVoided(k, NOW + 3)
        const voided = Option.getOrThrow(yield* payments.find(k))
        expect([voided.state, voided.paymentIntentId, voided.updatedAt]).toEqual(["voided", first, NOW + 3])
      }))

    it.effect("concurrent claims of one key, open and voided: one row, every caller gets it", () =>
      Effect.gen(function*() {
        const payments = yield* StripePaymentStore
        const k = key()
        const results = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => i % 2 === 0 ? "open" as const : "voided" as const),
          (state) => payments.claim({ key: k, sessionId: sessionOf(k), state, now: NOW }),
          { concurrency: "unbounded" }
        )
        const stored = Option.getOrThrow(yield* payments.find(k))
        for (const result of results) expect(result).toEqual(stored)
      }))
  })

contract("StripePaymentStore: memory", MemoryStripePaymentStore.pipe(Layer.provide(freshMemoryDatabase)))
contract(
  "StripePaymentStore: SQL on embedded PGlite",
  SqlStripePaymentStore.pipe(Layer.provideMerge(embeddedDatabase()))
)
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  contract("StripePaymentStore: SQL on PostgreSQL", SqlStripePaymentStore.pipe(Layer.provideMerge(postgresDatabase())))
})
