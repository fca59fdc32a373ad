/**
 * Issue 8 through the public surface: the discount extension and capabilities on every store
 * (memory, SQL over embedded PGlite, SQL over PostgreSQL when TEST_DATABASE_URL is set): apply,
 * replace and clear codes, pay the discounted total, expiry by the Clock, `max_redemptions` under
 * concurrent completions, and the rate limit on rejected codes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import { address, buyer, get, paymentData, post, testApp } from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

const totalOf = (body: { totals: Array<{ type: string; amount: number }> }, type = "total") =>
  body.totals.find((t) => t.type === type)?.amount

const approvedCharges = Effect.flatMap(ChargeStore, (store) => store.listCharges).pipe(
  Effect.map((charges) => charges.filter((charge) => charge.outcome === "approved"))
)

const redemptions = Effect.flatMap(CheckoutStore, (store) => store.coupons.redemptions)

const discountsSuite = (store: StoreUnderTest) => {
  /** A fresh application over a fresh store; `seed` coupon counts are stored before the app seeds the catalog's. */
  const run = <A, E>(
    effect: Effect.Effect<A, E, any>,
    seed: ReadonlyArray<{ id: string; timesRedeemed: number }> = []
  ) =>
    Effect.flatMap(store.fresh, (storeLayer) =>
      Effect.provide(
        effect,
        testApp({
          store: Layer.tap(storeLayer, (ctx) => Context.get(ctx, CheckoutStore).coupons.seed(seed).pipe(Effect.orDie))
        })
      )) as Effect.Effect<A, E, never>

  const createWith = (codes: ReadonlyArray<string> | undefined, items = [{ id: "tshirt-classic", quantity: 2 }]) =>
    post("/checkout_sessions", {
      items,
      buyer,
      fulfillment_address: address,
      ...(codes === undefined ? {} : { discounts: { codes } })
    })

  describe("capabilities", () => {
    it.effect("declares payment handlers, interventions narrowed to the agent's, and the discount extension", () =>
      run(Effect.gen(function*() {
        const response = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          capabilities: { interventions: { supported: ["address_verification", "biometrics", "unknown"] } }
        })
        expect(response.status).toBe(201)
        const capabilities = response.body.capabilities
        expect(capabilities.payment.handlers.map((h: { id: string }) => h.id)).toEqual(["card_tokenized"])
        expect(capabilities.interventions).toMatchObject({
          supported: ["address_verification"],
          enforcement: "conditional"
        })
        expect(capabilities.extensions).toEqual([expect.objectContaining({
          name: "dev.proto.discount",
          extends: [
            "$.CheckoutSessionCreateRequest.discounts",
            "$.CheckoutSessionUpdateRequest.discounts",
            "$.CheckoutSession.discounts"
          ]
        })])
        const plain = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] })
        expect(plain.body.capabilities.interventions.supported).toEqual(["3ds", "address_verification"])
        // returned on every read as well
        expect((yield* get(`/checkout_sessions/${response.body.id}`)).body.capabilities).toEqual(capabilities)
      })))
  })

  describe("codes", () => {
    it.effect("apply on create, replace and clear on update", () =>
      run(Effect.gen(function*() {
        const plain = yield* createWith(undefined)
        expect(plain.body.discounts).toEqual({ codes: [], applied: [], rejected: [] })
        const created = yield* createWith(["welcome10"])
        expect(created.status).toBe(201)
        expect(created.body.line_items[0]).toMatchObject({
          base_amount: 5000,
          discount: 500,
          subtotal: 4500,
          tax: 399,
          total: 4899
        })
        expect(totalOf(created.body, "items_discount")).toBe(500)
        expect(totalOf(created.body)).toBe(totalOf(plain.body)! - 500 - 45) // 45 = tax on 500 (8.875 %, NY)
        expect(created.body.discounts.applied).toEqual([{
          id: "dsc_coupon_welcome10",
          code: "WELCOME10",
          coupon: {
            id: "coupon_welcome10",
            name: "Welcome, 10 % off",
            percent_off: 10,
            duration: "once",
            max_redemptions: 1000,
            metadata: { campaign: "welcome" }
          },
          amount: 500,
          automatic: false,
          method: "across",
          priority: 1,
          allocations: [{ path: "$.line_items[0]", amount: 500 }]
        }])
        const id = created.body.id
        const replaced = yield* post(`/checkout_sessions/${id}`, { discounts: { codes: ["FIVEOFF", "nope"] } })
        expect(replaced.status).toBe(200)
        expect(replaced.body.discounts.codes).toEqual(["FIVEOFF", "nope"])
        expect(replaced.body.discounts.applied.map((a: { code: string; amount: number }) => [a.code, a.amount]))
          .toEqual([["FIVEOFF", 500]])
        expect(replaced.body.discounts.rejected).toEqual([
          { code: "nope", reason: "discount_code_invalid", message: "Code nope is not a valid discount code." }
        ])
        expect(replaced.body.messages).toEqual([
          {
            type: "info",
            param: "$.discounts.codes[1]",
            content_type: "plain",
            content: "Code nope is not a valid discount code."
          }
        ])
        expect(replaced.body.status).toBe("ready_for_payment")
        // absent keeps the codes; an items change re-prices them (2 mugs = 2800 < 3000 minimum)
        const smaller = yield* post(`/checkout_sessions/${id}`, { items: [{ id: "mug-ceramic", quantity: 2 }] })
        expect(smaller.body.discounts.rejected.map((r: { reason: string }) => r.reason)).toEqual([
          "discount_code_minimum_not_met",
          "discount_code_invalid"
        ])
        const cleared = yield* post(`/checkout_sessions/${id}`, { discounts: { codes: [] } })
        expect(cleared.body.discounts).toEqual({ codes: [], applied: [], rejected: [] })
        expect(cleared.body.messages).toEqual([])
        expect(cleared.body.totals.some((t: { type: string }) => t.type === "items_discount")).toBe(false)
      })))

    it.effect("duplicates, a second percent coupon and a used-up coupon are rejected", () =>
      run(Effect.gen(function*() {
        const response = yield* createWith(["WELCOME10", "welcome10", "LAUNCH50", "SUMMER25"])
        expect(response.body.discounts.rejected.map((r: { code: string; reason: string }) => [r.code, r.reason]))
          .toEqual([
            ["welcome10", "discount_code_already_applied"],
            ["LAUNCH50", "discount_code_usage_limit_reached"],
            ["SUMMER25", "discount_code_invalid"] // not started yet at the TestClock's 1970
          ])
        expect(response.body.messages.map((m: { param: string }) => m.param)).toEqual([
          "$.discounts.codes[1]",
          "$.discounts.codes[2]",
          "$.discounts.codes[3]"
        ])
      })))

    it.effect("400 for too many codes, a code too long or not a string", () =>
      run(Effect.gen(function*() {
        const many = yield* createWith(Array.from({ length: 11 }, (_, i) => `C${i}`))
        expect(many.status).toBe(400)
        expect(many.body).toMatchObject({ code: "invalid", param: "$.discounts.codes" })
        const long = yield* createWith(["x".repeat(65)])
        expect(long.body).toMatchObject({ code: "invalid", param: "$.discounts.codes[0]" })
        const created = yield* createWith([])
        const notString = yield* post(`/checkout_sessions/${created.body.id}`, { discounts: { codes: [7] } })
        expect(notString.status).toBe(400)
        expect(notString.body.param).toBe("$.discounts.codes[0]")
      })))
  })

  describe("paying", () => {
    it.effect("the charge is the discounted total and the redemption is counted", () =>
      run(Effect.gen(function*() {
        const created = yield* createWith(["WELCOME10", "FIVEOFF"])
        const total = totalOf(created.body)!
        const paid = yield* post(`/checkout_sessions/${created.body.id}/complete`, { payment_data: paymentData })
        expect(paid.status).toBe(200)
        expect(totalOf(paid.body)).toBe(total)
        expect((yield* approvedCharges).map((c) => c.amount)).toEqual([total])
        const counts = yield* redemptions
        expect(counts.get("coupon_welcome10")).toBe(1)
        expect(counts.get("coupon_fiveoff")).toBe(1)
        expect(counts.get("coupon_launch50")).toBe(100)
      })))

    it.effect("a declined payment counts nothing", () =>
      run(Effect.gen(function*() {
        const created = yield* createWith(["WELCOME10"])
        const declined = yield* post(`/checkout_sessions/${created.body.id}/complete`, {
          payment_data: { token: "tok_chargeDeclined", provider: "stripe" }
        })
        expect(declined.status).toBe(402)
        expect((yield* redemptions).get("coupon_welcome10")).toBe(0)
        // the rejection infos of the session survive the decline message
        const paid = yield* post(`/checkout_sessions/${created.body.id}/complete`, { payment_data: paymentData })
        expect(paid.status).toBe(200)
        expect((yield* redemptions).get("coupon_welcome10")).toBe(1)
      })))

    it.effect("a code that expires before completion: 422, re-priced, then paid at the new total", () =>
      run(Effect.gen(function*() {
        const end = Date.parse("2025-09-01T00:00:00Z")
        yield* TestClock.setTime(end - 60_000)
        const created = yield* createWith(["SUMMER25"])
        expect(created.body.discounts.applied.map((a: { code: string }) => a.code)).toEqual(["SUMMER25"])
        expect(created.body.discounts.applied[0].end).toBe("2025-09-01T00:00:00.000Z")
        yield* TestClock.adjust(60_000)
        const late = yield* post(`/checkout_sessions/${created.body.id}/complete`, { payment_data: paymentData })
        expect(late.status).toBe(422)
        expect(late.body).toMatchObject({
          type: "invalid_request",
          code: "discount_code_expired",
          param: "$.discounts.codes[0]"
        })
        expect(yield* approvedCharges).toEqual([])
        const after = (yield* get(`/checkout_sessions/${created.body.id}`)).body
        expect(after.discounts.rejected).toEqual([
          expect.objectContaining({ code: "SUMMER25", reason: "discount_code_expired" })
        ])
        expect(totalOf(after)).toBeGreaterThan(totalOf(created.body)!)
        const paid = yield* post(`/checkout_sessions/${created.body.id}/complete`, { payment_data: paymentData })
        expect(paid.status).toBe(200)
        expect((yield* approvedCharges).map((c) => c.amount)).toEqual([totalOf(after)])
      })))

    it.effect("max_redemptions holds under concurrent completions; no charge above the total shown", () =>
      run(
        Effect.gen(function*() {
          const sessions = yield* Effect.all(
            Array.from({ length: 6 }, () => createWith(["WELCOME10"], [{ id: "mug-ceramic", quantity: 1 }]))
          )
          for (const s of sessions) expect(s.body.discounts.applied).toHaveLength(1)
          const shown = totalOf(sessions[0]!.body)!
          const responses = yield* Effect.all(
            sessions.map((s) => post(`/checkout_sessions/${s.body.id}/complete`, { payment_data: paymentData })),
            { concurrency: "unbounded" }
          )
          const ok = responses.filter((r) => r.status === 200)
          const refused = responses.filter((r) => r.status === 422)
          expect(ok).toHaveLength(3)
          expect(refused).toHaveLength(3)
          for (const r of refused) expect(r.body.code).toBe("discount_code_usage_limit_reached")
          expect((yield* redemptions).get("coupon_welcome10")).toBe(1000)
          const charges = yield* approvedCharges
          expect(charges.map((c) => c.amount)).toEqual([shown, shown, shown])
          // the refused sessions now show the full price and can be paid at it
          const refusedIds = sessions.filter((_, i) => responses[i]!.status === 422).map((s) => s.body.id as string)
          for (const id of refusedIds) {
            const again = yield* post(`/checkout_sessions/${id}/complete`, { payment_data: paymentData })
            expect(again.status).toBe(200)
            expect(totalOf(again.body)).toBeGreaterThan(shown)
          }
          expect((yield* redemptions).get("coupon_welcome10")).toBe(1000)
        }),
        [{ id: "coupon_welcome10", timesRedeemed: 997 }]
      ))
  })

  describe("rate limit on rejected codes", () => {
    it.effect("20 rejected codes per minute per API key, then 429 with Retry-After, nothing applied", () =>
      run(Effect.gen(function*() {
        const bogus = (n: number) => Array.from({ length: 10 }, (_, i) => `GUESS${n}_${i}`)
        expect((yield* createWith(bogus(1))).status).toBe(201)
        const created = yield* createWith(bogus(2))
        expect(created.status).toBe(201)
        const limited = yield* post(`/checkout_sessions/${created.body.id}`, { discounts: { codes: ["WELCOME10"] } })
        expect(limited.status).toBe(429)
        expect(limited.body).toMatchObject({
          type: "invalid_request",
          code: "too_many_requests",
          param: "$.discounts.codes"
        })
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect((yield* get(`/checkout_sessions/${created.body.id}`)).body.discounts.codes).toEqual(bogus(2))
        expect((yield* createWith(["WELCOME10"])).status).toBe(429)
        // requests without codes are not limited
        expect((yield* createWith(undefined)).status).toBe(201)
        expect((yield* post(`/checkout_sessions/${created.body.id}`, { discounts: { codes: [] } })).status).toBe(200)
        yield* TestClock.adjust(3_000) // one token back (20 per minute)
        const after = yield* post(`/checkout_sessions/${created.body.id}`, { discounts: { codes: ["WELCOME10"] } })
        expect(after.status).toBe(200)
        expect(after.body.discounts.applied).toHaveLength(1)
      })))
  })
}

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`discount extension on ${store.name}`, () => {
    store.register()
    discountsSuite(store)
  })
}
