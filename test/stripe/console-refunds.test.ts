/**
 * The console's refund action goes through the same order service as the API, so a refund to the
 * original payment is a Stripe Refund; Stripe refusing or unavailable is shown on the order's page
 * with nothing recorded, and the same form submitted again replays Stripe's refund.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { hiddenField, type makeConsoleClient, signedInConsole } from "../support/console-client.ts"
import { get, post, testApp } from "../support/http.ts"
import { createStripeOrder, stripeConfig } from "../support/stripe-orders.ts"
import { FakeStripe } from "../support/stripe/fake-stripe.ts"

let fake: FakeStripe
beforeAll(async () => {
  fake = await FakeStripe.start()
})
afterAll(async () => {
  await fake.stop()
})

const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    effect,
    testApp({ config: stripeConfig(fake) }) as Layer.Layer<any>
  ) as Effect.Effect<A, E, never>

const seenOf = (client: Effect.Effect.Success<typeof makeConsoleClient>, id: string) =>
  Effect.map(client.get(`/console/orders/${id}`), (page) => hiddenField(page.text, "seen")!)

const refundsAtStripe = (intentId: string) =>
  fake.refunds().filter((r) => r.payment_intent === intentId).map((r) => r.amount)

describe("console refunds through Stripe", () => {
  it.live("a refund from the console is a Stripe refund; unavailable, then the same form again, refunds once", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      const client = yield* signedInConsole()
      const seen = yield* seenOf(client, order.id)
      fake.fail({ path: "/v1/refunds", method: "POST", with: "drop-after-processing", times: 3 })
      const down = yield* client.post(`/console/orders/${order.id}/refund`, {
        seen,
        amount: "4",
        type: "original_payment"
      })
      expect(down.status).toBe(503)
      expect(down.text).toContain("The payment provider did not answer; the refund was not recorded.")
      expect((yield* get(`/orders/${order.id}`)).body.refunds).toEqual([])
      // The page shown after the failure carries the same tag: submitting it again replays the refund.
      expect(yield* seenOf(client, order.id)).toBe(seen)
      const again = yield* client.post(`/console/orders/${order.id}/refund`, {
        seen,
        amount: "4",
        type: "original_payment"
      })
      expect(again.status).toBe(303)
      expect((yield* client.get(again.headers.get("location")!)).text).toContain("Refund recorded.")
      expect(refundsAtStripe(intent.id)).toEqual([400])
      expect((yield* get(`/orders/${order.id}`)).body.refunds).toEqual([{ type: "original_payment", amount: 400 }])
    })))

  it.live("Stripe refusing is shown with its reason and nothing is recorded", () =>
    run(Effect.gen(function*() {
      const { intent, order } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      fake.openDispute(intent.id)
      const client = yield* signedInConsole()
      const disputed = yield* client.post(`/console/orders/${order.id}/refund`, {
        seen: yield* seenOf(client, order.id),
        amount: "1",
        type: "original_payment"
      })
      expect(disputed.status).toBe(409)
      expect(disputed.text).toContain("The payment is disputed")
      expect(refundsAtStripe(intent.id)).toEqual([])
      expect((yield* get(`/orders/${order.id}`)).body.refunds).toEqual([])
    })))
})
