/**
 * Completing a checkout with a delegated payment token (`vt_…`), on every store: either
 * `payment_data` shape pays and consumes the token; the allowance is enforced (merchant, currency,
 * max_amount, the session it was issued for, one use, expires_at by the Clock), a refused token
 * answering 422 payment_declined and staying active, unused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import { createReadySession, get, post } from "../support/http.ts"
import {
  approvedCharges,
  completeAndPayOnEveryStore,
  handlerPayment,
  tokenize,
  type TokenOptions
} from "./complete-payment-fixtures.ts"

completeAndPayOnEveryStore((run) => {
  describe("complete with a vt_ token", () => {
    it.effect("pays with either payment_data shape and consumes the token", () =>
      run(Effect.gen(function*() {
        const first = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(first.id)
        const paid = yield* post(`/checkout_sessions/${first.id}/complete`, handlerPayment(token))
        expect(paid.status).toBe(200)
        expect(paid.body.order.checkout_session_id).toBe(first.id)

        const second = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const legacy = yield* tokenize(second.id)
        const paidLegacy = yield* post(`/checkout_sessions/${second.id}/complete`, {
          payment_data: { token: legacy, provider: "acp_vault" }
        })
        expect(paidLegacy.status).toBe(200)
        const charges = yield* approvedCharges
        expect(charges.map((c) => c.amount)).toEqual([
          first.totals.find((t) => t.type === "total")!.amount,
          second.totals.find((t) => t.type === "total")!.amount
        ])
      })))

    const violations: ReadonlyArray<[string, (sessionId: string) => TokenOptions | "missing", RegExp]> = [
      ["unknown token", () => "missing", /does not exist/],
      ["another merchant", () => ({ merchantId: "merchant_other" }), /merchant/],
      ["another currency", () => ({ currency: "eur" }), /EUR/],
      ["total above max_amount", () => ({ maxAmount: 100 }), /exceeds/]
    ]
    for (const [name, options, message] of violations) {
      it.effect(`422 payment_declined with a message on the session: ${name}`, () =>
        run(Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const opts = options(session.id)
          const token = opts === "missing" ? "vt_doesnotexist" : yield* tokenize(session.id, opts)
          const response = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(response.status).toBe(422)
          expect(response.body).toMatchObject({
            type: "invalid_request",
            code: "payment_declined",
            param: "$.payment_data.instrument.credential.token"
          })
          expect(response.body.message).toMatch(message)
          const after = (yield* get(`/checkout_sessions/${session.id}`)).body
          expect(after.status).toBe("ready_for_payment")
          expect(after.messages).toContainEqual(expect.objectContaining({ type: "error", code: "payment_declined" }))
          expect(yield* approvedCharges).toEqual([])
          // A refused token is not held: it stays active, unused.
          if (opts !== "missing") {
            const stored = Option.getOrThrow(yield* Effect.flatMap(VaultStore, (vault) => vault.getToken(token)))
            expect([stored.state, stored.usedBySession]).toEqual(["active", undefined])
          }
        })))
    }

    it.effect("a token whose card the vault cannot open: 422, nothing charged, the token given back", () =>
      run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const refused = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(refused.status).toBe(422)
          expect(refused.body).toMatchObject({
            code: "payment_declined",
            param: "$.payment_data.instrument.credential.token"
          })
          expect(refused.body.message).toMatch(/cannot be used/)
          expect(yield* approvedCharges).toEqual([])
          const stored = Option.getOrThrow(yield* Effect.flatMap(VaultStore, (vault) => vault.getToken(token)))
          expect([stored.state, stored.usedBySession]).toEqual(["active", undefined])
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
        }),
        { unreadableCards: true }
      ))

    it.effect("a token issued for another session, or already used, cannot pay", () =>
      run(Effect.gen(function*() {
        const a = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const b = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(a.id)
        const wrongSession = yield* post(`/checkout_sessions/${b.id}/complete`, handlerPayment(token))
        expect(wrongSession.status).toBe(422)
        expect(wrongSession.body.message).toMatch(/another checkout session/)
        const refused = Option.getOrThrow(yield* Effect.flatMap(VaultStore, (vault) => vault.getToken(token)))
        expect([refused.state, refused.usedBySession]).toEqual(["active", undefined])
        expect((yield* post(`/checkout_sessions/${a.id}/complete`, handlerPayment(token))).status).toBe(200)
        const reused = yield* post(`/checkout_sessions/${b.id}/complete`, handlerPayment(token))
        expect(reused.status).toBe(422)
        expect(reused.body.message).toMatch(/already been used|another checkout session/)
        expect(yield* approvedCharges).toHaveLength(1)
      })))

    it.effect("the allowance expires at expires_at by the Clock", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const expiresAt = new Date(60_000).toISOString()
        const token = yield* tokenize(session.id, { expiresAt })
        yield* TestClock.adjust(60_000)
        const late = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
        expect(late.status).toBe(422)
        expect(late.body.message).toMatch(/expired/)

        const other = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const fresh = yield* tokenize(other.id, { expiresAt: new Date(120_000).toISOString() })
        yield* TestClock.adjust(59_999)
        expect((yield* post(`/checkout_sessions/${other.id}/complete`, handlerPayment(fresh))).status).toBe(200)
      })))
  })
})
