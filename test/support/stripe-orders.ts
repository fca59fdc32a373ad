/**
 * Orders paid through Stripe, for the after-sale tests: the application configured against the
 * fake Stripe, and an order whose session was completed over HTTP with the demo catalog's `stripe`
 * handler, so that its payment is the provider's own PaymentIntent on the fake.
 */
import { Effect, Option, Redacted } from "effect"
import Stripe from "stripe"
import { OrderStore } from "../../src/orders/order-store.ts"
import type { AppConfigShape } from "../../src/platform/config.ts"
import { createReadySession, post } from "./http.ts"
import type { FakeStripe } from "./stripe/fake-stripe.ts"

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

/** An order paid through the Stripe provider: a ready session completed over HTTP with a granted token of its total. */
export const createStripeOrder = (
  fake: FakeStripe,
  items: ReadonlyArray<{ id: string; quantity: number }> = [{ id: "tshirt-classic", quantity: 2 }]
) =>
  Effect.gen(function*() {
    const session = yield* createReadySession(items)
    const total = session.totals.find((line) => line.type === "total")!.amount
    const token = fake.grantToken({ maxAmount: total }).id
    const completed = yield* post(`/checkout_sessions/${session.id}/complete`, {
      payment_data: { handler_id: "stripe_spt", instrument: { type: "card", credential: { type: "spt", token } } }
    })
    if (completed.status !== 200) {
      return yield* Effect.dieMessage(`complete answered ${completed.status}: ${completed.text}`)
    }
    const stored = yield* Effect.flatMap(OrderStore, (orders) => orders.getOrder(completed.body.order.id))
    const order = Option.getOrThrow(stored).order
    const intent = fake.paymentIntents().find((pi) =>
      pi.metadata.checkout_session_id === session.id && pi.status === "succeeded"
    )!
    return { order, intent, total }
  })
