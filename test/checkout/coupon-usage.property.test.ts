/**
 * Which coupon holds count against a coupon's redemption limit is the domain's rule
 * (`heldByOthers` of `src/checkout/session/inventory.ts`: another session's hold, while it is live). The
 * memory store applies it; the SQL store writes it as its filter (so it never reads the holds of
 * payments that never finished). This requires `coupons.usage` to answer the rule's count on
 * random redemption counts and holds (the session's own, other sessions', expiring before, at and
 * after now), on memory, embedded PGlite and, when `TEST_DATABASE_URL` is set, PostgreSQL.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Runtime } from "effect"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { heldByOthers } from "../../src/checkout/session/inventory.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"

const NOW = Date.parse("2030-01-01T00:00:00.000Z")
const COUPONS = 3

interface Case {
  /** Per coupon index: its times redeemed, or null when it is not stored. */
  readonly redeemed: ReadonlyArray<number | null>
  /** Holds by session index (0 is the session asking): when they expire, relative to now, and on which coupons. */
  readonly holds: ReadonlyArray<
    { readonly session: number; readonly expiresIn: number; readonly coupons: ReadonlyArray<number> }
  >
  readonly lock: boolean
}

const testCase: fc.Arbitrary<Case> = fc.record({
  redeemed: fc.array(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 5 }) }, fc.constant(null)), {
    minLength: COUPONS,
    maxLength: COUPONS
  }),
  holds: fc.uniqueArray(
    fc.record({
      session: fc.integer({ min: 0, max: 4 }),
      expiresIn: fc.constantFrom(-60_000, -1, 0, 1, 60_000),
      coupons: fc.uniqueArray(fc.integer({ min: 0, max: COUPONS - 1 }), { maxLength: COUPONS })
    }),
    { maxLength: 5, selector: (hold) => hold.session }
  ),
  lock: fc.boolean()
})

const runCase = (input: Case) =>
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const run = randomUUID().replaceAll("-", "")
    const coupons = Array.from({ length: COUPONS }, (_, i) => `coupon_${run}_${i}`)
    const sessionOf = (index: number) => `cs_${run}_${index}`
    yield* store.coupons.seed(
      input.redeemed.flatMap((times, i) => (times === null ? [] : [{ id: coupons[i]!, timesRedeemed: times }]))
    )
    // A hold names a stored coupon (the stores refuse others).
    const holds = input.holds.map((hold) => ({
      ...hold,
      coupons: hold.coupons.filter((i) => input.redeemed[i] !== null)
    }))
    for (const hold of holds) {
      yield* store.coupons.hold(sessionOf(hold.session), hold.coupons.map((i) => coupons[i]!), NOW + hold.expiresIn)
    }

    const expected = new Map<string, number>()
    for (const [i, times] of input.redeemed.entries()) {
      if (times === null) continue
      const held = holds.flatMap((hold) =>
        hold.coupons.includes(i)
          ? [{ sessionId: sessionOf(hold.session), quantity: 1, expiresAt: NOW + hold.expiresIn }]
          : []
      )
      expected.set(coupons[i]!, times + heldByOthers(held, NOW, sessionOf(0)))
    }
    const usage = yield* store.transaction(store.coupons.usage(coupons, NOW, sessionOf(0), input.lock))
    expect(usage, JSON.stringify(input)).toEqual(expected)
  })

const agreement = (name: string, storeLayer: Layer.Layer<CheckoutStore, unknown>, numRuns: number) =>
  layer(Layer.orDie(storeLayer), { timeout: 120_000, excludeTestServices: true })(name, (it) => {
    it.effect("coupons.usage counts what the domain rule counts", () =>
      Effect.gen(function*() {
        const runtime = yield* Effect.runtime<CheckoutStore>()
        yield* Effect.promise(() =>
          fc.assert(fc.asyncProperty(testCase, (input) => Runtime.runPromise(runtime)(runCase(input))), { numRuns })
        )
      }), 120_000)
  })

agreement("coupon usage: memory", MemoryCheckoutStore.pipe(Layer.provide(freshMemoryDatabase)), 200)
agreement("coupon usage: SQL on embedded PGlite", SqlCheckoutStore.pipe(Layer.provide(embeddedDatabase())), 100)
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  agreement("coupon usage: SQL on PostgreSQL", SqlCheckoutStore.pipe(Layer.provide(postgresDatabase())), 100)
})
