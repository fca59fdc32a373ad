/**
 * The Checkout Session API's stock and time rules through its public surface (in-process HTTP),
 * on every store (see `./checkout-api-fixtures.ts`): reservations never exceed the stock (across
 * creates, updates, cancels, completions and concurrent creates), and an idle session expires
 * after SESSION_TTL_SECONDS on TestClock, releasing its stock, also when the sweeper expires it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { buyer, createReadySession, get, paymentData, post } from "../support/http.ts"
import { describeCheckoutApiOnEveryStore } from "./checkout-api-fixtures.ts"

const ttlMillis = 21600 * 1000

describeCheckoutApiOnEveryStore((run) => {
  describe("inventory", () => {
    it.effect("never reserves more than the stock; cancel releases; complete consumes", () =>
      run(Effect.gen(function*() {
        // print-limited has 3 units
        const a = yield* createReadySession([{ id: "print-limited", quantity: 2 }])
        const tooMany = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }, { id: "print-limited", quantity: 2 }]
        })
        expect(tooMany.status).toBe(422)
        expect(tooMany.body).toMatchObject({ type: "invalid_request", code: "out_of_stock", param: "$.items[1]" })
        const b = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })).status).toBe(422)
        yield* post(`/checkout_sessions/${a.id}/cancel`)
        const c = yield* createReadySession([{ id: "print-limited", quantity: 2 }])
        yield* post(`/checkout_sessions/${b.id}/complete`, { payment_data: paymentData })
        yield* post(`/checkout_sessions/${c.id}/complete`, { payment_data: paymentData })
        const soldOut = yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })
        expect(soldOut.status).toBe(422)
        expect(soldOut.body.code).toBe("out_of_stock")
      })))

    it.effect("duplicate lines of one product count together; an update beyond stock leaves the session unchanged", () =>
      run(Effect.gen(function*() {
        const dup = yield* post("/checkout_sessions", {
          items: [{ id: "print-limited", quantity: 2 }, { id: "print-limited", quantity: 2 }]
        })
        expect(dup.status).toBe(422)
        expect(dup.body.param).toBe("$.items[1]")
        const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        const grow = yield* post(`/checkout_sessions/${session.id}`, { items: [{ id: "print-limited", quantity: 3 }] })
        expect(grow.status).toBe(200) // its own unit counts as available to it
        const beyond = yield* post(`/checkout_sessions/${session.id}`, {
          items: [{ id: "print-limited", quantity: 4 }]
        })
        expect(beyond.status).toBe(422)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.line_items[0].item.quantity).toBe(3)
        const shrink = yield* post(`/checkout_sessions/${session.id}`, { items: [{ id: "mug-ceramic", quantity: 1 }] })
        expect(shrink.status).toBe(200)
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 3 }] })).status).toBe(201)
      })))

    it.effect("concurrent creates never oversell", () =>
      run(Effect.gen(function*() {
        const results = yield* Effect.all(
          Array.from(
            { length: 10 },
            () => post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })
          ),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r.status === 201)).toHaveLength(3)
        expect(results.filter((r) => r.status === 422)).toHaveLength(7)
      })))
  })

  describe("expiry (TestClock)", () => {
    it.effect("an idle session expires after SESSION_TTL_SECONDS and releases its stock", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "print-limited", quantity: 3 }])
        yield* TestClock.adjust(ttlMillis - 1)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })).status).toBe(422)
        yield* TestClock.adjust(1)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("expired")
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 3 }] })).status).toBe(201)
        const update = yield* post(`/checkout_sessions/${session.id}`, { buyer })
        expect(update.status).toBe(422)
        expect(update.body.code).toBe("session_not_modifiable")
        const complete = yield* post(`/checkout_sessions/${session.id}/complete`, { payment_data: paymentData })
        expect(complete.status).toBe(409)
        expect(complete.body.code).toBe("session_expired")
        const cancel = yield* post(`/checkout_sessions/${session.id}/cancel`)
        expect(cancel.status).toBe(405)
        expect(cancel.body.code).toBe("session_expired")
      })))

    it.effect("an update resets the idle timer", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* TestClock.adjust(ttlMillis - 1000)
        yield* post(`/checkout_sessions/${session.id}`, { buyer })
        yield* TestClock.adjust(2000)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
      })))

    it.effect("the sweeper stores the expired status", () =>
      run(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        expect(yield* checkout.expireDue(100)).toBe(0)
        yield* TestClock.adjust(ttlMillis)
        expect(yield* checkout.expireDue(100)).toBe(1)
        expect(yield* checkout.expireDue(100)).toBe(0)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("expired")
      })))
  })
})
