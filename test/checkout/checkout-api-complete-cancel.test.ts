/**
 * The Checkout Session API's complete (POST /checkout_sessions/:id/complete) and cancel (POST
 * /checkout_sessions/:id/cancel) through its public surface (in-process HTTP), on every store (see
 * `./checkout-api-fixtures.ts`): the order returned, both payment_data shapes and their 400s, a
 * session not ready, final or unknown, and a declined payment.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PaymentDeclined } from "../../src/payments/model/payment.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { address, buyer, createReadySession, get, paymentData, post } from "../support/http.ts"
import { describeCheckoutApiOnEveryStore } from "./checkout-api-fixtures.ts"

describeCheckoutApiOnEveryStore((run) => {
  describe("POST /checkout_sessions/:id/complete", () => {
    it.effect("charges, completes and returns the order (200), with both payment_data shapes", () =>
      run(Effect.gen(function*() {
        for (const payment_data of [paymentData, { token: "tok_visa", provider: "acp_vault" }]) {
          const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data })
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          expect(completed.body.order).toEqual({
            id: expect.stringMatching(/^ord_/),
            checkout_session_id: created.id,
            permalink_url: expect.stringMatching(/^https:\/\/merchant\.test\/order-status\/[0-9A-Za-z]{22}$/)
          })
          const read = yield* get(`/checkout_sessions/${created.id}`)
          expect(read.body.status).toBe("completed")
        }
      })))

    it.effect("buyer in the body is applied first", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          fulfillment_address: address
        })
        expect(created.body.status).toBe("not_ready_for_payment")
        const completed = yield* post(`/checkout_sessions/${created.body.id}/complete`, {
          buyer,
          payment_data: paymentData
        })
        expect(completed.status).toBe(200)
        expect(completed.body.buyer).toEqual(buyer)
      })))

    it.effect("422 session_not_ready when something is missing", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }], buyer })
        const response = yield* post(`/checkout_sessions/${created.body.id}/complete`, { payment_data: paymentData })
        expect(response.status).toBe(422)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "session_not_ready",
          message:
            "The session is not ready for payment: A shipping address is required for physical items. See the session's messages.",
          param: "$.fulfillment_address"
        })
        expect((yield* get(`/checkout_sessions/${created.body.id}`)).body.status).toBe("not_ready_for_payment")
        const noBuyer = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          fulfillment_address: address
        })
        const unpaid = yield* post(`/checkout_sessions/${noBuyer.body.id}/complete`, { payment_data: paymentData })
        expect(unpaid.status).toBe(422)
        expect(unpaid.body).toEqual({
          type: "invalid_request",
          code: "session_not_ready",
          message:
            "The session is not ready for payment: Buyer details (first name, last name and email) are required. See the session's messages.",
          param: "$.buyer"
        })
      })))

    it.effect("400 for bad payment_data, naming the field of the shape sent", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const path = `/checkout_sessions/${created.id}/complete`
        const cases: ReadonlyArray<[unknown, string, string]> = [
          [{}, "$.payment_data", "missing"],
          [{ payment_data: "tok" }, "$.payment_data", "invalid"],
          [{ payment_data: {} }, "$.payment_data.handler_id", "missing"],
          [{ payment_data: { handler_id: "card_tokenized" } }, "$.payment_data.instrument", "missing"],
          [
            { payment_data: { ...paymentData, instrument: { type: "card", credential: { type: "spt" } } } },
            "$.payment_data.instrument.credential.token",
            "missing"
          ],
          [{ payment_data: { token: "tok_visa" } }, "$.payment_data.provider", "missing"],
          [{ payment_data: { ...paymentData, handler_id: "paypal" } }, "$.payment_data.handler_id", "invalid"],
          [{ payment_data: { token: "tok_visa", provider: "unknown_psp" } }, "$.payment_data.provider", "invalid"],
          // Keys of both shapes: the handler shape is meant, and its missing instrument is refused.
          [
            { payment_data: { handler_id: "card_tokenized", token: "tok_visa", provider: "acp_vault" } },
            "$.payment_data.instrument",
            "missing"
          ],
          [
            { payment_data: { instrument: paymentData.instrument, token: "tok_visa", provider: "acp_vault" } },
            "$.payment_data.handler_id",
            "missing"
          ],
          [{ payment_data: paymentData, buyer: { ...buyer, email: 3 } }, "$.buyer.email", "invalid"]
        ]
        for (const [body, param, code] of cases) {
          const response = yield* post(path, body)
          expect(response.status, JSON.stringify(body)).toBe(400)
          expect(response.body).toMatchObject({ code, param })
        }
        expect((yield* get(`/checkout_sessions/${created.id}`)).body.status).toBe("ready_for_payment")
      })))

    it.effect("409 on a completed or canceled session; 404 on an unknown one", () =>
      run(Effect.gen(function*() {
        const done = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${done.id}/complete`, { payment_data: paymentData })
        const again = yield* post(`/checkout_sessions/${done.id}/complete`, { payment_data: paymentData })
        expect(again.status).toBe(409)
        expect(again.body).toMatchObject({ type: "invalid_request", code: "session_completed" })
        const canceled = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${canceled.id}/cancel`)
        const onCanceled = yield* post(`/checkout_sessions/${canceled.id}/complete`, { payment_data: paymentData })
        expect(onCanceled.status).toBe(409)
        expect(onCanceled.body.code).toBe("session_canceled")
        expect((yield* post("/checkout_sessions/cs_nope/complete", { payment_data: paymentData })).status).toBe(404)
      })))

    it.effect("a decline is 402 payment_declined; the session stays payable with a message", () => {
      const declining = Layer.succeed(PaymentProvider, {
        threeDSecure: false,
        authorize: () => Effect.void,
        charge: () => Effect.fail(new PaymentDeclined({ reason: "card_declined", message: "Your card was declined." })),
        release: () => Effect.void,
        settleCharge: () => Effect.succeedNone
      })
      return run(
        Effect.gen(function*() {
          const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const response = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
          expect(response.status).toBe(402)
          expect(response.body).toMatchObject({ type: "processing_error", code: "payment_declined" })
          const session = (yield* get(`/checkout_sessions/${created.id}`)).body
          expect(session.status).toBe("ready_for_payment")
          expect(session.messages).toContainEqual(expect.objectContaining({ type: "error", code: "payment_declined" }))
          // the stock stays reserved for this session: 2 of the 3 prints remain
          expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 3 }] })).status).toBe(
            422
          )
          expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 2 }] })).status).toBe(
            201
          )
        }),
        { payments: declining }
      )
    })
  })

  describe("POST /checkout_sessions/:id/cancel", () => {
    it.effect("cancels with the full session (200); 405 when final; 404 when unknown", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const canceled = yield* post(`/checkout_sessions/${created.id}/cancel`)
        expect(canceled.status).toBe(200)
        expect(canceled.body).toMatchObject({ id: created.id, status: "canceled", line_items: created.line_items })
        const twice = yield* post(`/checkout_sessions/${created.id}/cancel`)
        expect(twice.status).toBe(405)
        expect(twice.body).toMatchObject({ type: "invalid_request", code: "session_canceled" })
        const done = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${done.id}/complete`, { payment_data: paymentData })
        const late = yield* post(`/checkout_sessions/${done.id}/cancel`)
        expect(late.status).toBe(405)
        expect(late.body.code).toBe("session_completed")
        expect((yield* post("/checkout_sessions/cs_nope/cancel")).status).toBe(404)
      })))
  })
})
