/**
 * What the Checkout Session API's test files (`checkout-api-*.test.ts`) share: registering a
 * file's cases on every store (memory, SQL over embedded PGlite, and SQL over PostgreSQL when
 * TEST_DATABASE_URL is set), each case run against a fresh application over fresh state (see
 * `test/support/store-under-test.ts`). The cases run on TestClock: SQL I/O is real (promises are
 * not virtualized), while every `now` the service uses, including the expiry comparisons made in
 * SQL, comes from the Clock as a parameter.
 */
import { describe } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, type TestAppOptions } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"

/** Runs `effect` against a fresh application over a fresh store. */
export type RunInFreshApp = <A, E>(
  effect: Effect.Effect<A, E, any>,
  options?: Omit<TestAppOptions, "store">
) => Effect.Effect<A, E, never>

/**
 * Registers the cases of `registerCases` once per store, in a `Checkout API on <store>` suite
 * (skipped when the store is not available to this run), with the store's `run`.
 */
export const describeCheckoutApiOnEveryStore = (registerCases: (run: RunInFreshApp) => void) => {
  for (const store of storesUnderTest) {
    describe.skipIf(!store.available)(`Checkout API on ${store.name}`, () => {
      store.register()
      const run: RunInFreshApp = <A, E>(
        effect: Effect.Effect<A, E, any>,
        options: Omit<TestAppOptions, "store"> = {}
      ) =>
        Effect.flatMap(
          store.fresh,
          (storeLayer) => Effect.provide(effect, testApp({ ...options, store: storeLayer }))
        ) as Effect.Effect<A, E, never>
      registerCases(run)
    })
  }
}
