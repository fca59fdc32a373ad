/**
 * What the delegate payment API's test files (`delegate-api-*.test.ts`) share: running a case
 * against the HTTP application in memory, on TestClock set to `NOW` (`run`) or on the real clock
 * (`runLive`), with the application's vault store in context so that a case can look at what was
 * stored, and posting a body to POST /agentic_commerce/delegate_payment (`tokenize`).
 */
import { Effect, Layer, TestClock } from "effect"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { DELEGATE_PATH, NoPayments, NOW } from "../support/delegate.ts"
import { post, testApp, type TestAppOptions } from "../support/http.ts"

/** The app plus its vault store (the same one: on the app's memory database), so tests can look at what was stored. */
const appWithStore = (options: TestAppOptions = {}) => {
  const vaultStore = options.vaultStore ?? MemoryVaultStore
  return Layer.merge(testApp({ payments: NoPayments, ...options, vaultStore }), Layer.orDie(vaultStore)).pipe(
    Layer.provide(freshMemoryDatabase)
  )
}

/** Runs `effect` against a fresh application (and its vault store) in memory, the TestClock at `NOW`. */
export const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW), effect),
    appWithStore(options)
  ) as Effect.Effect<A, E, never>

/** As `run`, on the real clock (for what keeps a lease on the Clock, as the idempotency middleware). */
export const runLive = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, appWithStore(options)) as Effect.Effect<A, E, never>

/** POSTs `body` (and `headers`) to the delegate payment route. */
export const tokenize = (body: unknown, headers?: Record<string, string>) =>
  post(DELEGATE_PATH, body, headers !== undefined ? { headers } : {})
