/**
 * The console's refund in Chromium when Stripe says no or is down: the merchant sees why on the
 * order's page, nothing is refunded, and trying again once Stripe is back refunds once. Screenshots
 * in test-results/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { hasChromium, launchBrowser, screenshotPath, serveApp } from "../support/browser.ts"
import { get, MERCHANT_API_KEY, post, testApp } from "../support/http.ts"
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
    Effect.scoped(effect),
    testApp({
      config: { publicBaseUrl: "http://shop.test", port: 8080, ...stripeConfig(fake) }
    }) as Layer.Layer<any>
  ) as Effect.Effect<A, E, never>

const use = <A>(promise: () => Promise<A>) => Effect.promise(promise)

describe.skipIf(!hasChromium)("console refunds through Stripe in Chromium", () => {
  it.live("Stripe down, then refusing (a dispute): each shown on the page, nothing refunded; back up, one refund", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const { intent, order } = yield* createStripeOrder(fake)
      yield* post(`/orders/${order.id}/confirm`)
      const browser = yield* launchBrowser
      const page = yield* use(() => browser.newPage())
      yield* use(() => page.goto(`${base}/console`))
      yield* use(() => page.getByLabel("Merchant API key").fill(MERCHANT_API_KEY))
      yield* use(() => page.getByRole("button", { name: "Sign in" }).click())
      yield* use(() => page.goto(`${base}/console/orders/${order.id}`))

      const refund = (amount: string) =>
        Effect.gen(function*() {
          yield* use(() => page.getByLabel(/^Amount in/).fill(amount))
          yield* use(() => page.getByLabel("To").selectOption("original_payment"))
          yield* use(() => page.getByRole("button", { name: "Refund", exact: true }).click())
        })

      fake.fail({ path: "/v1/refunds", method: "POST", with: "500", times: 3 })
      yield* refund("3")
      expect(yield* use(() => page.getByRole("alert").textContent())).toBe(
        "The payment provider did not answer; the refund was not recorded. Submitting the same refund again " +
          "in a moment cannot refund twice."
      )
      yield* use(() => page.screenshot({ path: screenshotPath("console-refund-stripe-unavailable"), fullPage: true }))
      expect(fake.refunds().filter((r) => r.payment_intent === intent.id)).toEqual([])

      const dispute = fake.openDispute(intent.id)
      yield* refund("3")
      expect(yield* use(() => page.getByRole("alert").textContent())).toContain("The payment is disputed")
      yield* use(() => page.screenshot({ path: screenshotPath("console-refund-stripe-refused"), fullPage: true }))
      expect((yield* get(`/orders/${order.id}`)).body.refunds).toEqual([])

      // Won, the charge can be refunded again (another amount: the same form on the same order is the
      // same request, whose refusal Stripe keeps under its key).
      fake.closeDispute(dispute.id, "won")
      yield* refund("2")
      expect(yield* use(() => page.getByRole("status").textContent())).toBe("Refund recorded.")
      yield* use(() => page.screenshot({ path: screenshotPath("console-refund-stripe-recorded"), fullPage: true }))
      expect(fake.refunds().filter((r) => r.payment_intent === intent.id).map((r) => r.amount)).toEqual([200])
      expect((yield* get(`/orders/${order.id}`)).body.refunds).toEqual([{ type: "original_payment", amount: 200 }])
    })))
})
