/**
 * What the fake Stripe's own tests share: a fake per file, a real `stripe` SDK client pointed at
 * it, and PaymentIntent parameters that pay with a shared payment granted token (the SDK's types
 * do not know the preview parameter `payment_method_data[shared_payment_granted_token]` yet).
 */
import { afterAll, beforeAll } from "@effect/vitest"
import Stripe from "stripe"
import { FakeStripe, type FakeStripeOptions } from "../support/stripe/fake-stripe.ts"

export const useFake = (options: FakeStripeOptions = {}): () => FakeStripe => {
  let fake: FakeStripe | undefined
  beforeAll(async () => {
    fake = await FakeStripe.start(options)
  })
  afterAll(async () => {
    await fake?.stop()
  })
  return () => fake!
}

export const sdk = (fake: FakeStripe, config: Stripe.StripeConfig = {}): Stripe =>
  new Stripe(fake.secretKey, { ...fake.clientConfig(), maxNetworkRetries: 0, ...config })

export const withToken = (token: string): Stripe.PaymentIntentCreateParams.PaymentMethodData =>
  ({
    type: "card",
    shared_payment_granted_token: token
  }) as unknown as Stripe.PaymentIntentCreateParams.PaymentMethodData

/** Create-and-confirm with a token, as the provider will call it. */
export const payWith = (
  token: string,
  amount: number,
  extra: Partial<Stripe.PaymentIntentCreateParams> = {}
): Stripe.PaymentIntentCreateParams => ({
  amount,
  currency: "usd",
  confirm: true,
  payment_method_data: withToken(token),
  metadata: { checkout_session_id: "cs_test_1" },
  ...extra
})

/** The error a promise rejects with (fails the test when it resolves). */
export const rejection = async (promise: Promise<unknown>): Promise<any> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected the call to fail")
}

/** Resolves once `condition` holds (polled every 5 ms; fails after 5 s). */
export const until = async (condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + 5000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached in 5 s")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
