/**
 * A payment charges the total the session showed when it began: a price changed while the payment
 * is under way (held at the charge, or pending after a crash) changes neither the charge nor the
 * order; a price changed before the complete refuses it (422 `price_changed`, the session re-priced,
 * nothing charged); an archived or out-of-stock item is a message at its line and refuses the complete
 * (422 `product_unavailable`). On every store.
 */
import { expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { createReadySession, get, post, request } from "../support/http.ts"
import { approvedCharges, completeAndPayOnEveryStore, handlerPayment, tokenize } from "./complete-payment-fixtures.ts"

const totalOf = (body: { totals: ReadonlyArray<{ type: string; amount: number }> }) =>
  body.totals.find((total) => total.type === "total")!.amount

const setMugPrice = (unit_amount: number) =>
  Effect.map(request("PATCH", "/products/mug-ceramic/variants/mug-ceramic", { body: { unit_amount } }), (r) => {
    expect(r.status).toBe(200)
    return r
  })

completeAndPayOnEveryStore((run) => {
  it.effect("a price changed between the charge and the completion: the order is what was charged", () => {
    const charged = Effect.runSync(Effect.makeLatch(false))
    const proceed = Effect.runSync(Effect.makeLatch(false))
    return run(
      Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 2 }])
        const token = yield* tokenize(session.id)
        const paying = yield* Effect.fork(post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token)))
        yield* charged.await
        yield* setMugPrice(9900)
        yield* proceed.open
        const completed = yield* Fiber.join(paying)
        expect(completed.status).toBe(200)
        expect(completed.body.totals).toEqual(session.totals)
        expect((yield* approvedCharges).map((charge) => charge.amount)).toEqual([totalOf(session)])
        const order = yield* get(`/orders/${completed.body.order.id}`)
        expect(order.body.totals.find((t: { type: string }) => t.type === "total").amount).toBe(totalOf(session))
      }),
      {
        aroundCompleting: (_store, _completion, complete) =>
          charged.open.pipe(Effect.zipRight(proceed.await), Effect.zipRight(complete))
      }
    )
  })

  it.effect("a price changed while a payment is pending after a crash: the retry charges what was shown", () =>
    run(
      Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(session.id)
        expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(500)
        yield* setMugPrice(100)
        const resumed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
        expect(resumed.status).toBe(200)
        expect(resumed.body.totals).toEqual(session.totals)
        expect((yield* approvedCharges).map((charge) => charge.amount)).toEqual([totalOf(session)])
      }),
      { crash: true }
    ))

  it.effect("a price changed before the complete: 422 price_changed, nothing charged, the session re-priced", () =>
    run(Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 2 }])
      const token = yield* tokenize(session.id)
      yield* setMugPrice(1500)
      const refused = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
      expect(refused.status).toBe(422)
      expect(refused.body).toMatchObject({ code: "price_changed", param: "$.line_items[0]" })
      expect(yield* approvedCharges).toEqual([])
      const shown = yield* get(`/checkout_sessions/${session.id}`)
      expect(shown.body.line_items[0].base_amount).toBe(3000)
      expect(shown.body.status).toBe("ready_for_payment")
      const paid = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
      expect(paid.status).toBe(200)
      expect((yield* approvedCharges).map((charge) => charge.amount)).toEqual([totalOf(shown.body)])
    })))

  it.effect("a tax category changed before the complete: the total the session showed is not charged either", () =>
    run(Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
      const token = yield* tokenize(session.id)
      const rewritten = yield* request("PUT", "/products/mug-ceramic", {
        body: {
          id: "mug-ceramic",
          title: "Ceramic Coffee Mug, 12 oz",
          variants: [{ id: "mug-ceramic", unit_amount: 1400, tax_category: "gift_card" }]
        }
      })
      expect(rewritten.status).toBe(200)
      const refused = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
      expect(refused.status).toBe(422)
      expect(refused.body.code).toBe("price_changed")
      expect(yield* approvedCharges).toEqual([])
      const shown = yield* get(`/checkout_sessions/${session.id}`)
      expect(totalOf(shown.body)).toBeLessThan(totalOf(session))
    })))

  it.effect("an archived item: a message at its line on the next update, and the complete refused", () =>
    run(Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }, {
        id: "tshirt-classic",
        quantity: 1
      }])
      const token = yield* tokenize(session.id)
      expect((yield* request("DELETE", "/products/mug-ceramic")).status).toBe(200)
      const updated = yield* post(`/checkout_sessions/${session.id}`, {})
      expect(updated.status).toBe(200)
      expect(updated.body.status).toBe("not_ready_for_payment")
      expect(updated.body.messages[0]).toMatchObject({ type: "error", code: "invalid", param: "$.line_items[0]" })
      const refused = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
      expect(refused.status).toBe(422)
      expect(refused.body).toMatchObject({ code: "product_unavailable", param: "$.line_items[0]" })
      expect(yield* approvedCharges).toEqual([])
      const kept = yield* post(`/checkout_sessions/${session.id}`, { items: [{ id: "tshirt-classic", quantity: 1 }] })
      expect(kept.body.status).toBe("ready_for_payment")
      expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(200)
    })))

  it.effect("an item the merchant marks out of stock: out_of_stock at its line, and the complete refused", () =>
    run(Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
      const token = yield* tokenize(session.id)
      yield* request("PATCH", "/products/mug-ceramic/variants/mug-ceramic", { body: { availability: "out_of_stock" } })
      const refused = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
      expect(refused.status).toBe(422)
      expect(refused.body.code).toBe("product_unavailable")
      const shown = yield* post(`/checkout_sessions/${session.id}`, {})
      expect(shown.body.messages[0]).toMatchObject({ code: "out_of_stock", param: "$.line_items[0]" })
    })))
})
