/**
 * Completing a checkout whose card is declined, on every store: 402 with the reason on the
 * session, the token given back so that another card then pays; the well-known test tokens in
 * the legacy shape (provider stripe).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createReadySession, get, post } from "../support/http.ts"
import { approvedCharges, completeAndPayOnEveryStore, handlerPayment, tokenize } from "./complete-payment-fixtures.ts"

completeAndPayOnEveryStore((run) => {
  describe("declines", () => {
    it.effect("a declined card is 402; the token is given back and another card then pays", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const declined = yield* tokenize(session.id, { number: "4000000000000002" })
        const first = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(declined))
        expect(first.status).toBe(402)
        expect(first.body).toMatchObject({
          type: "processing_error",
          code: "payment_declined",
          message: "The card was declined."
        })
        const after = (yield* get(`/checkout_sessions/${session.id}`)).body
        expect(after.status).toBe("ready_for_payment")
        expect(after.messages).toContainEqual(
          expect.objectContaining({ code: "payment_declined", content: "The card was declined." })
        )
        const poor = yield* tokenize(session.id, { number: "4000000000009995" })
        const second = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(poor))
        expect(second.status).toBe(402)
        expect(second.body.message).toMatch(/insufficient funds/)
        const good = yield* tokenize(session.id)
        const third = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(good))
        expect(third.status).toBe(200)
        expect(third.body.messages).toEqual([])
        expect(yield* approvedCharges).toHaveLength(1)
      })))

    it.effect("well-known test tokens in the legacy shape (provider stripe)", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const declined = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_chargeDeclined", provider: "stripe" }
        })
        expect(declined.status).toBe(402)
        const unknown = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_unknown", provider: "stripe" }
        })
        expect(unknown.status).toBe(422)
        expect(unknown.body).toMatchObject({ code: "payment_declined", param: "$.payment_data.token" })
        expect(unknown.body.message).toMatch(/not known to the payment processor/)
        const paid = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_visa", provider: "stripe" }
        })
        expect(paid.status).toBe(200)
      })))

    it.effect("a token named like a property of every object is as unknown as any other word; the session still pays", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        for (const token of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
          const refused = yield* post(`/checkout_sessions/${session.id}/complete`, {
            payment_data: { token, provider: "stripe" }
          })
          expect(refused.status, token).toBe(422)
          expect(refused.body).toMatchObject({ code: "payment_declined", param: "$.payment_data.token" })
        }
        const paid = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_visa", provider: "stripe" }
        })
        expect(paid.status).toBe(200)
        expect(yield* approvedCharges).toHaveLength(1)
      })))
  })
})
