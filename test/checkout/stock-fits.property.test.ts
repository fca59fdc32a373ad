/**
 * "Does the requested stock fit" is the domain's rule (`availableTo` and `reservationsFit` of
 * `src/checkout/session/inventory.ts`), but the one-statement create of the SQL store
 * (`checkout_create_session`) decides it inside the statement, to stay atomic without locks held
 * between round trips. This runs both on random stock, reservations of other sessions (live,
 * expired, expiring exactly now, on products with and without a stock row, beyond the stock on
 * hand) and requests, and requires the same answers: `lockStock` reads the rule's availability, and
 * the session is created exactly when the rule says its reservations fit, taking its units then and
 * none otherwise. On memory (which calls the rule), embedded PGlite and, when
 * `TEST_DATABASE_URL` is set, PostgreSQL.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Runtime } from "effect"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { availableTo, type HeldUnits, reservationsFit } from "../../src/checkout/session/inventory.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { makeSession } from "./checkout-store-fixtures.ts"

const NOW = Date.parse("2030-01-01T00:00:00.000Z")
const PRODUCTS = 4

interface Case {
  /** Per product index: its stock on hand, or null when it has no stock row. */
  readonly onHand: ReadonlyArray<number | null>
  /** Other sessions' reservations: their expiry relative to now, and product index → quantity. */
  readonly others: ReadonlyArray<
    { readonly expiresIn: number; readonly items: ReadonlyArray<readonly [number, number]> }
  >
  /** The new session's reservations: product index → quantity. */
  readonly requested: ReadonlyArray<readonly [number, number]>
}

const items = (maxQuantity: number) =>
  fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: PRODUCTS - 1 }), fc.integer({ min: 1, max: maxQuantity })), {
    maxLength: 3,
    selector: ([product]) => product
  })

const testCase: fc.Arbitrary<Case> = fc.record({
  onHand: fc.array(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 12 }) }, fc.constant(null)), {
    minLength: PRODUCTS,
    maxLength: PRODUCTS
  }),
  others: fc.array(
    fc.record({ expiresIn: fc.constantFrom(-60_000, -1, 0, 1, 60_000), items: items(6) }),
    { maxLength: 4 }
  ),
  requested: items(14)
})

/** One case on fresh products and sessions: the store's create and the domain rule side by side. */
const runCase = (input: Case) =>
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const run = randomUUID().replaceAll("-", "")
    const products = Array.from({ length: PRODUCTS }, (_, i) => `prod_${run}_${i}`)
    const session = makeSession(`cs_${run}_new`)

    yield* store.inventory.seedStock(
      input.onHand.flatMap((stock, i) => (stock === null ? [] : [{ id: products[i]!, stock }]))
    )
    const held: Array<HeldUnits & { readonly productId: string }> = []
    for (const [index, other] of input.others.entries()) {
      const sessionId = `cs_${run}_${index}`
      const expiresAt = NOW + other.expiresIn
      for (const [product, quantity] of other.items) {
        held.push({ sessionId, productId: products[product]!, quantity, expiresAt })
      }
      const reservations = new Map(other.items.map(([product, quantity]) => [products[product]!, quantity]))
      yield* store.inventory.setReservations(sessionId, reservations, expiresAt)
    }

    const requested = new Map(input.requested.map(([product, quantity]) => [products[product]!, quantity]))
    const available = new Map<string, number>()
    for (const [i, stock] of input.onHand.entries()) {
      const productId = products[i]!
      if (stock !== null) {
        available.set(
          productId,
          availableTo(stock, held.filter((row) => row.productId === productId), NOW, session.id)
        )
      }
    }
    const fits = reservationsFit(requested, available)

    const context = JSON.stringify({ input, available: [...available], fits })
    // What the locked path reads is the rule's availability too.
    expect(yield* store.transaction(store.inventory.lockStock(products, NOW, session.id)), context).toEqual(available)
    expect(yield* store.createSessionReservingStock({ session, reservations: requested }, NOW), context).toBe(fits)
    expect(Option.isSome(yield* store.sessions.get(session.id)), context).toBe(fits)
    // After it, another session finds the new session's units taken when they fit, and nothing
    // taken when they did not (a refused create leaves no reservation and no counter moved).
    const after = new Map([...available].map(([id, units]) => [id, fits ? units - (requested.get(id) ?? 0) : units]))
    expect(yield* store.transaction(store.inventory.lockStock(products, NOW, `cs_${run}_later`)), context).toEqual(
      after
    )
  })

/**
 * Creates one after another, without a `lockStock` between them: their sessions fall in different
 * shards of the products (`stock_shards`), so the units one create's shard borrowed are parked where
 * the next create does not take from. Each is answered as the rule says given the ones accepted
 * before it, and at the end `lockStock` reads what is left.
 */
interface Sequence {
  /** Per product index: its stock on hand. */
  readonly onHand: ReadonlyArray<number>
  /** Each create's reservations: product index → quantity. */
  readonly creates: ReadonlyArray<Case["requested"]>
}

const sequence: fc.Arbitrary<Sequence> = fc.record({
  onHand: fc.array(fc.integer({ min: 0, max: 90 }), { minLength: PRODUCTS, maxLength: PRODUCTS }),
  creates: fc.array(items(30), { minLength: 1, maxLength: 8 })
})

const runSequence = (input: Sequence) =>
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const run = randomUUID().replaceAll("-", "")
    const products = Array.from({ length: PRODUCTS }, (_, i) => `prod_${run}_${i}`)
    yield* store.inventory.seedStock(input.onHand.map((stock, i) => ({ id: products[i]!, stock })))
    const available = new Map(input.onHand.map((stock, i) => [products[i]!, stock]))
    const answers: Array<boolean> = []
    for (const [index, create] of input.creates.entries()) {
      const session = makeSession(`cs_${run}_${index}_${randomUUID()}`)
      const requested = new Map(create.map(([product, quantity]) => [products[product]!, quantity]))
      const fits = reservationsFit(requested, available)
      answers.push(yield* store.createSessionReservingStock({ session, reservations: requested }, NOW))
      expect(answers, JSON.stringify({ input, index })).toEqual([...answers.slice(0, -1), fits])
      if (fits) { for (const [id, units] of requested) available.set(id, available.get(id)! - units) }
    }
    expect(yield* store.transaction(store.inventory.lockStock(products, NOW, `cs_${run}_later`)), JSON.stringify(input))
      .toEqual(available)
  })

/** Runs `check` on `numRuns` inputs of `arbitrary`, each on the store of the test's layer. */
const holds = <A>(
  arbitrary: fc.Arbitrary<A>,
  check: (input: A) => Effect.Effect<void, unknown, CheckoutStore>,
  numRuns: number
) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<CheckoutStore>()
    yield* Effect.promise(() =>
      fc.assert(fc.asyncProperty(arbitrary, (input) => Runtime.runPromise(runtime)(check(input))), { numRuns })
    )
  })

const agreement = (name: string, storeLayer: Layer.Layer<CheckoutStore, unknown>, numRuns: number) =>
  layer(Layer.orDie(storeLayer), { timeout: 120_000, excludeTestServices: true })(name, (it) => {
    it.effect(
      "lockStock reads the domain's availability; the create inserts exactly when the domain says it fits",
      () => holds(testCase, runCase, numRuns),
      120_000
    )
    it.effect(
      "creates one after another, spread over the shards, are answered as the rule says",
      () => holds(sequence, runSequence, numRuns),
      120_000
    )
  })

agreement("stock fits: memory", MemoryCheckoutStore.pipe(Layer.provide(freshMemoryDatabase)), 200)
agreement(
  "stock fits: checkout_create_session on embedded PGlite",
  SqlCheckoutStore.pipe(Layer.provide(embeddedDatabase())),
  150
)
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  agreement(
    "stock fits: checkout_create_session on PostgreSQL",
    SqlCheckoutStore.pipe(Layer.provide(postgresDatabase())),
    150
  )
})
