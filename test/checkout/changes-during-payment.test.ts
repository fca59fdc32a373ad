/**
 * A session being paid cannot be changed: from step 1 of completing (the attempt recorded) until
 * the payment is settled, an update (keeping the items or not) or a cancel gets 409 with a
 * Retry-After, and the order the payment makes is the session that was charged. Once the payment
 * is settled (declined, or settled by the sweep), the session can be changed again; a refusal is
 * not kept under the request's Idempotency-Key; a payment resumed after a crash is priced as when
 * it began. On every store.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import {
  cancelRequest,
  clientOf,
  completeRequest,
  createRequest,
  idempotencyKey,
  LINE_ITEMS_VERSIONS,
  updateRequest
} from "../support/acp-fixtures.ts"
import { address, buyer, createReadySession, get, post, type TestResponse } from "../support/http.ts"
import { approvedCharges, completeAndPayOnEveryStore, handlerPayment, tokenize } from "./complete-payment-fixtures.ts"

const totalOf = (body: { totals: ReadonlyArray<{ type: string; amount: number }> }) =>
  body.totals.find((total) => total.type === "total")!.amount

/** The answer every change of a session being paid gets. */
const expectPaymentInProgress = (response: TestResponse) => {
  expect(response.status).toBe(409)
  expect(response.body.code).toBe("idempotency_in_flight")
  expect(response.headers.get("retry-after")).not.toBeNull()
}

/** Each change an agent could send while the session is being paid. */
const changes: ReadonlyArray<readonly [string, (id: string) => Effect.Effect<TestResponse, unknown, any>]> = [
  ["an update keeping the items", (id) => post(`/checkout_sessions/${id}`, { fulfillment_option_id: "express" })],
  ["an update of the items", (id) => post(`/checkout_sessions/${id}`, { items: [{ id: "mug-ceramic", quantity: 3 }] })],
  ["a cancel", (id) => post(`/checkout_sessions/${id}/cancel`, {})]
]

completeAndPayOnEveryStore((run) => {
  describe("changes while a payment is in progress", () => {
    for (const [name, change] of changes) {
      it.effect(`${name} between the charge and the completion is refused; the order is what was charged`, () => {
        const charged = Effect.runSync(Effect.makeLatch(false))
        const proceed = Effect.runSync(Effect.makeLatch(false))
        return run(
          Effect.gen(function*() {
            const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
            const token = yield* tokenize(session.id)
            const paying = yield* Effect.fork(post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token)))
            yield* charged.await
            expectPaymentInProgress(yield* change(session.id))
            yield* proceed.open
            const completed = yield* Fiber.join(paying)
            expect(completed.status).toBe(200)
            expect(completed.body.status).toBe("completed")
            const charges = yield* approvedCharges
            expect(charges.map((charge) => charge.amount)).toEqual([totalOf(completed.body)])
            expect(completed.body.totals).toEqual(session.totals)
            expect(completed.body.fulfillment_option_id).toBe("standard")
            expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          }),
          {
            aroundCompleting: (_store, _completion, complete) =>
              charged.open.pipe(Effect.zipRight(proceed.await), Effect.zipRight(complete))
          }
        )
      })

      it.effect(`${name} after a crash mid-payment is refused until the payment is resumed`, () =>
        run(
          Effect.gen(function*() {
            const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
            const token = yield* tokenize(session.id)
            const crashed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
            expect(crashed.status).toBe(500)
            expectPaymentInProgress(yield* change(session.id))
            expect((yield* get(`/checkout_sessions/${session.id}`)).body.totals).toEqual(session.totals)
            const resumed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
            expect(resumed.status).toBe(200)
            expect(resumed.body.totals).toEqual(session.totals)
            expect(yield* approvedCharges).toHaveLength(1)
          }),
          { crash: true }
        ))
    }

    it.effect("a refusal while paying is not kept under the request's Idempotency-Key: its retry runs again", () =>
      run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const token = yield* tokenize(session.id)
          expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(500)
          const keyed = { headers: { "Idempotency-Key": "cancel-while-paying" } }
          expectPaymentInProgress(yield* post(`/checkout_sessions/${session.id}/cancel`, {}, keyed))
          expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(200)
          const retried = yield* post(`/checkout_sessions/${session.id}/cancel`, {}, keyed)
          expect(retried.headers.get("idempotent-replayed")).toBeNull()
          expect([retried.status, retried.body.code]).toEqual([405, "session_completed"])
        }),
        { crash: true }
      ))

    it.effect("a retry after a crash, once an applied code has ended, resumes the payment as priced when it began", () =>
      run(
        Effect.gen(function*() {
          const end = Date.parse("2025-09-01T00:00:00Z")
          yield* TestClock.setTime(end - 60_000)
          const created = yield* post("/checkout_sessions", {
            items: [{ id: "tshirt-classic", quantity: 2 }],
            buyer,
            fulfillment_address: address,
            discounts: { codes: ["SUMMER25"] }
          })
          const session = created.body
          expect(session.discounts.applied.map((applied: { code: string }) => applied.code)).toEqual(["SUMMER25"])
          const token = yield* tokenize(session.id)
          expect((yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))).status).toBe(500)
          yield* TestClock.adjust(60_000)
          const resumed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(resumed.status).toBe(200)
          expect(resumed.body.status).toBe("completed")
          expect(resumed.body.totals).toEqual(session.totals)
          expect((yield* approvedCharges).map((charge) => charge.amount)).toEqual([totalOf(session)])
          // A new payment is priced at its own time: the code has ended for every other session.
          const later = yield* post("/checkout_sessions", {
            items: [{ id: "tshirt-classic", quantity: 2 }],
            buyer,
            fulfillment_address: address,
            discounts: { codes: ["SUMMER25"] }
          })
          expect(later.body.discounts.applied).toEqual([])
        }),
        { crash: true }
      ))

    for (const version of LINE_ITEMS_VERSIONS) {
      it.effect(`${version}: a cancel while paying gets the version's 409, not kept under its key`, () =>
        run(
          Effect.gen(function*() {
            const client = clientOf(version)
            const created = yield* client.created(createRequest(version))
            const ready = (yield* client.update(created.id, updateRequest(version))).body
            const token = yield* client.delegate(ready.id, 1_000_000)
            const completeKey = { headers: { "idempotency-key": idempotencyKey() } }
            const complete = completeRequest(version, token)
            expect((yield* client.complete(ready.id, complete, completeKey)).status).toBe(500)
            const cancelKey = { headers: { "idempotency-key": idempotencyKey() } }
            const refused = yield* client.cancel(ready.id, cancelRequest, cancelKey)
            expectPaymentInProgress(refused)
            expect(refused.body.type).toBe(version === "2026-04-17" ? "invalid_request" : "request_not_idempotent")
            // The complete's 500 was not kept either: its retry with the same key resumes the payment.
            expect((yield* client.complete(ready.id, complete, completeKey)).status).toBe(200)
            const retried = yield* client.cancel(ready.id, cancelRequest, cancelKey)
            expect(retried.headers.get("idempotent-replayed")).toBeNull()
            expect(retried.body.code).toBe("session_completed")
          }),
          { crash: true }
        ))
    }

    it.effect("a declined payment leaves the session changeable", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(session.id, { number: "4000000000000002" })
        const declined = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
        expect(declined.status).toBe(402)
        for (const [, change] of changes) expect((yield* change(session.id)).status).toBe(200)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("canceled")
      })))
  })
})
