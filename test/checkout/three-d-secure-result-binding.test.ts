/**
 * 3-D Secure results bound to the payment, through HTTP in every version that has the flow: a
 * result pays only when the authentication provider made it for this checkout session, amount,
 * currency, merchant and card, untampered and unexpired (else 422 at `$.authentication_result`,
 * nothing charged), and only once: concurrent completes with it make one order and one charge
 * (also on every store: memory, SQL on embedded PGlite, SQL on PostgreSQL when TEST_DATABASE_URL
 * is set), and after a crash between the charge and the commit a retry without it is in flight
 * (409) while a retry with it completes on the same charge.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { clientOf, completeRequest, LINE_ITEMS_VERSIONS } from "../support/acp-fixtures.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import { authenticateCard, CHALLENGE_CARD, delegateCard, FRICTIONLESS_CARD } from "../support/three-d-secure.ts"
import { crashingOnce } from "./complete-payment-fixtures.ts"
import { charges, readySession, refusal, requiringAuthentication, run } from "./three-d-secure-fixtures.ts"

describe.each(LINE_ITEMS_VERSIONS)("3-D Secure in %s", (version) => {
  const client = clientOf(version)

  describe("results bound to the payment", () => {
    /** A refused result: 422 at $.authentication_result, nothing charged, the token free again. */
    const expectRefused = (response: { status: number; body: any }, message: RegExp) => {
      expect(refusal(response)).toEqual({ status: 422, code: "payment_declined", param: "$.authentication_result" })
      expect(response.body.message).toMatch(message)
    }

    it.effect("made for another checkout session", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const other = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: "cs_other", amount: total })
        const response = yield* client.complete(
          id,
          completeRequest(version, token, { authentication_result: other.result })
        )
        expectRefused(response, /another checkout session|this checkout session/)
        expect(yield* charges).toEqual([])
        // The real one still pays with the same token.
        const own = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        const paid = yield* client.complete(id, completeRequest(version, token, { authentication_result: own.result }))
        expect(paid.body.status).toBe("completed")
      })))

    it.effect("made for another amount, another currency, or another card", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const cheaper = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total - 1 })
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: cheaper.result })),
          /another amount/
        )
        const euros = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total, currency: "EUR" })
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: euros.result })),
          /another amount/
        )
        const card = yield* authenticateCard({ number: FRICTIONLESS_CARD, sessionId: id, amount: total })
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: card.result })),
          /another card/
        )
        expect(yield* charges).toEqual([])
      })))

    it.effect("made for another merchant", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const other = yield* authenticateCard({
          number: CHALLENGE_CARD,
          sessionId: id,
          amount: total,
          merchantId: "merchant_other"
        })
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: other.result })),
          /this merchant/
        )
        expect(yield* charges).toEqual([])
      })))

    it.effect("an outcome the provider did not report", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const own = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        expect(own.result.outcome).toBe("authenticated")
        const relabelled = { ...own.result, outcome: "attempt_acknowledged" }
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: relabelled })),
          /did not report this authentication as attempt_acknowledged/
        )
        expect(yield* charges).toEqual([])
        // The result as the provider reported it still pays.
        const paid = yield* client.complete(id, completeRequest(version, token, { authentication_result: own.result }))
        expect(paid.body.status).toBe("completed")
      })))

    it.effect("presented with a test token, which names no card: refused, and not spent", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const own = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        expectRefused(
          yield* client.complete(id, completeRequest(version, "tok_visa", { authentication_result: own.result })),
          /another card/
        )
        expect(yield* charges).toEqual([])
        const paid = yield* client.complete(id, completeRequest(version, token, { authentication_result: own.result }))
        expect(paid.body.status).toBe("completed")
      })))

    it.effect("a tampered cryptogram, or a transaction the provider never made", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const { result } = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        const tampered = {
          ...result,
          outcome_details: { ...result.outcome_details, three_ds_cryptogram: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=" }
        }
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: tampered })),
          /cryptogram/
        )
        const unknown = { ...result, outcome_details: { ...result.outcome_details, transaction_id: "ds_unknown" } }
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: unknown })),
          /no record/
        )
      })))

    it.effect("an authentication that expired before the payment", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, FRICTIONLESS_CARD)
        const { result } = yield* authenticateCard({ number: FRICTIONLESS_CARD, sessionId: id, amount: total })
        yield* TestClock.adjust("601 seconds")
        expectRefused(
          yield* client.complete(id, completeRequest(version, token, { authentication_result: result })),
          /expired/
        )
        expect(yield* charges).toEqual([])
      })))

    it.effect("charged with a result, then a crash: a retry without it is in flight, with it paid once", () =>
      run(
        Effect.gen(function*() {
          const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
          const own = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
          const withResult = completeRequest(version, token, { authentication_result: own.result })
          expect((yield* client.complete(id, withResult)).status).toBe(500)
          expect(yield* charges).toHaveLength(1) // charged, not committed
          // Without the result the pending payment cannot be taken over, nor the session sent back
          // to authentication: in flight, retry shortly.
          const without = yield* client.complete(id, completeRequest(version, token))
          expect(refusal(without)).toEqual({ status: 409, code: "idempotency_in_flight", param: undefined })
          expect(without.headers.get("retry-after")).toBe("1")
          expect((yield* client.get(id)).body.status).toBe("ready_for_payment")
          const paid = yield* client.complete(id, withResult)
          expect(paid.body.status, paid.text).toBe("completed")
          expect(yield* charges).toHaveLength(1) // the same charge
        }),
        { store: crashingOnce(MemoryCheckoutStore, () => {}) }
      ))

    it.effect("one result pays once: two concurrent completes with it make one order and one charge", () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const { result } = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        const body = completeRequest(version, token, { authentication_result: result })
        const answers = yield* Effect.all([client.complete(id, body), client.complete(id, body)], {
          concurrency: "unbounded"
        })
        const statuses = answers.map((answer) => answer.status).sort()
        expect(statuses[0]).toBe(200)
        expect([200, 409]).toContain(statuses[1])
        const orders = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.order.id))
        expect(orders.size).toBe(1)
        expect(yield* charges).toHaveLength(1)
        // And it cannot pay another session.
        const second = yield* readySession(client)
        const secondToken = yield* delegateCard(client.version, second.id, CHALLENGE_CARD, second.total)
        const replay = yield* client.complete(
          second.id,
          completeRequest(version, secondToken, { authentication_result: result })
        )
        expectRefused(replay, /checkout session/)
      })))
  })
})

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`3-D Secure on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()
    const client = clientOf("2026-04-17")
    const onStores = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(storeUnderTest.freshStores, (stores) => run(effect, stores))

    it.effect("one result, four concurrent completes: one order, one charge, the result spent", () =>
      onStores(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const { result } = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        const body = completeRequest("2026-04-17", token, { authentication_result: result })
        const answers = yield* Effect.all(Array.from({ length: 4 }, () => client.complete(id, body)), {
          concurrency: "unbounded"
        })
        const completed = answers.filter((answer) => answer.status === 200)
        expect(completed.length).toBeGreaterThanOrEqual(1)
        for (const answer of answers) expect([200, 409]).toContain(answer.status)
        expect(new Set(completed.map((answer) => answer.body.order.id)).size).toBe(1)
        expect(yield* charges).toHaveLength(1)
        expect((yield* client.get(id)).body.status).toBe("completed")
      })))
  })
}
