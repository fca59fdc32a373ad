/**
 * What the tests of paying a checkout through Stripe share: a fake Stripe per file
 * (`test/support/stripe/`), the application configured with its key and address, the payment data
 * of a shared payment token in both shapes, and what the fake recorded for a session.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { paymentsOver } from "../../src/app/server.ts"
import type { AppConfigShape } from "../../src/platform/config.ts"
import { makeSdkStripeClient } from "../../src/stripe/http/sdk-stripe-client.ts"
import { NOW } from "../support/acp-fixtures.ts"
import { createReadySession, testApp, type TestAppOptions } from "../support/http.ts"
import { FakeStripe, type GrantOptions } from "../support/stripe/fake-stripe.ts"

export const useFakeStripe = (): () => FakeStripe => {
  let fake: FakeStripe | undefined
  beforeAll(async () => {
    fake = await FakeStripe.start()
  })
  afterAll(async () => {
    await fake?.stop()
  })
  return () => fake!
}

export const stripeConfig = (fake: FakeStripe): Partial<AppConfigShape> => ({
  stripe: {
    secretKey: Option.some(Redacted.make(fake.secretKey)),
    webhookSecret: Option.none(),
    apiBase: { protocol: "http", host: "127.0.0.1", port: fake.port },
    threeDSecureImport: true
  }
})

/** The application paying through `fake`; `timeoutMillis` shortens the SDK's wait for an answer. */
export const stripeApp = (
  fake: FakeStripe,
  options: TestAppOptions & { readonly timeoutMillis?: number } = {}
) => {
  const { timeoutMillis, ...rest } = options
  return testApp({
    ...(timeoutMillis === undefined ? {} : { payments: paymentsOver(makeSdkStripeClient({ timeoutMillis })) }),
    ...rest,
    config: { ...stripeConfig(fake), ...rest.config }
  })
}

/** Runs `effect` on a fresh application paying through `fake`, the TestClock at `NOW`. */
export const runWith = <A, E>(
  fake: FakeStripe,
  effect: Effect.Effect<A, E, any>,
  options: TestAppOptions & { readonly timeoutMillis?: number } = {}
) => Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), stripeApp(fake, options)) as Effect.Effect<A, E>

export const STRIPE_HANDLER = "stripe_spt"

export const sptPayment = (token: string) => ({
  handler_id: STRIPE_HANDLER,
  instrument: { type: "card", credential: { type: "spt", token } }
})

export const legacySpt = (token: string) => ({ token, provider: "stripe" })

export const intentsOf = (fake: FakeStripe, sessionId: string) =>
  fake.paymentIntents().filter((intent) => intent.metadata.checkout_session_id === sessionId)

export const succeededOf = (fake: FakeStripe, sessionId: string) =>
  intentsOf(fake, sessionId).filter((intent) => intent.status === "succeeded")

/** A ready session and a token granted for its total. */
export const readyWithToken = (fake: FakeStripe, grant: GrantOptions = {}) =>
  Effect.map(createReadySession([{ id: "mug-ceramic", quantity: 1 }]), (session) => ({
    session,
    total: session.totals.find((line) => line.type === "total")!.amount,
    token: fake.grantToken(grant).id
  }))
