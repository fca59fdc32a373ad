/**
 * Orders paid through Stripe, for the after-sale tests: the application configured against the
 * fake Stripe, and an order whose session's succeeded payment attempt is a PaymentIntent made on
 * the fake. Until the Stripe payment provider is part of the application, the PaymentIntent is made
 * with the SDK directly and the attempt written through the checkout store; with the provider, the
 * session is completed over HTTP with a `stripe` handler instead, and nothing else changes.
 */
import { Clock, Effect, Option, Redacted } from "effect"
import Stripe from "stripe"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import type { PaymentAttempt } from "../../src/checkout/payment/attempt.ts"
import { orderTotal } from "../../src/orders/model/order-state-machine.ts"
import type { AppConfigShape } from "../../src/platform/config.ts"
import { withToken } from "../payments/stripe-fake-fixtures.ts"
import type { FakeStripe } from "./stripe/fake-stripe.ts"
import { createOrder } from "./webhooks.ts"

/** The application's Stripe settings pointing at `fake`; `webhookSecret` turns `POST /stripe/webhooks` on. */
export const stripeConfig = (fake: FakeStripe, webhookSecret?: string): Partial<AppConfigShape> => ({
  stripe: {
    secretKey: Option.some(Redacted.make(fake.secretKey)),
    webhookSecret: webhookSecret === undefined ? Option.none() : Option.some(Redacted.make(webhookSecret)),
    apiBase: { protocol: "http", host: "127.0.0.1", port: fake.port },
    threeDSecureImport: false
  }
})

/** A client of the fake, as a test (or the Stripe dashboard) uses it: no retries. */
export const fakeClient = (fake: FakeStripe): Stripe =>
  new Stripe(fake.secretKey, { ...fake.clientConfig(), maxNetworkRetries: 0 })

/** Records `chargeId` as the session's succeeded payment (what a completion through the provider leaves). */
export const recordPaidAttempt = (sessionId: string, amount: number, chargeId: string) =>
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const session = yield* Effect.map(store.sessions.get(sessionId), Option.getOrThrow)
    const now = yield* Clock.currentTimeMillis
    const attempt: PaymentAttempt = {
      sessionId,
      sequence: 1,
      idempotencyKey: `${sessionId}:1`,
      amount,
      currency: "usd",
      credentialRef: "spt_test",
      state: "pending",
      chargeId: undefined,
      createdAt: now,
      updatedAt: now
    }
    yield* store.startPaymentAttempt(session, attempt)
    yield* store.paymentAttempts.update({ ...attempt, state: "succeeded", chargeId, updatedAt: now })
  })

/** An order paid with a PaymentIntent on `fake` of its total; the PaymentIntent names the session in its metadata. */
export const createStripeOrder = (
  fake: FakeStripe,
  items?: ReadonlyArray<{ id: string; quantity: number }>
) =>
  Effect.gen(function*() {
    const order = yield* createOrder(items)
    const total = orderTotal(order)
    const intent = yield* Effect.promise(() =>
      fakeClient(fake).paymentIntents.create({
        amount: total,
        currency: "usd",
        confirm: true,
        payment_method_data: withToken(fake.grantToken({ maxAmount: total }).id),
        metadata: { checkout_session_id: order.checkout_session_id }
      })
    )
    yield* recordPaidAttempt(order.checkout_session_id, total, intent.id)
    return { order, intent, total }
  })
