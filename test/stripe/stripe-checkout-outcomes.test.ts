/**
 * Completing a checkout with a Stripe shared payment token, through HTTP against the fake Stripe:
 * each outcome (succeeded, card decline, 3-D Secure asked, processing, an unusable token), both
 * `payment_data` shapes and the handler's offer, and one PaymentIntent of exactly the session's total.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { clientOf, completeRequest, createRequest, updateRequest } from "../support/acp-fixtures.ts"
import { get, post, testApp } from "../support/http.ts"
import {
  intentsOf,
  legacySpt,
  readyWithToken,
  runWith,
  sptPayment,
  STRIPE_HANDLER,
  succeededOf,
  useFakeStripe
} from "./stripe-checkout-fixtures.ts"

const fake = useFakeStripe()

const complete = (id: string, payment_data: unknown, version?: string) =>
  post(`/checkout_sessions/${id}/complete`, { payment_data }, version === undefined ? {} : { version })

const attemptOf = (id: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.readSessionForPayment(id)).pipe(
    Effect.map((read) => Option.getOrUndefined(Option.flatMap(read, (found) => found.latestAttempt)))
  )

describe("Stripe: completing with a shared payment token", () => {
  it.effect("succeeded: the order; one PaymentIntent for exactly the total, with the session and attempt", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        for (const shape of [sptPayment, legacySpt]) {
          const { session, token, total } = yield* readyWithToken(fake())
          const completed = yield* complete(session.id, shape(token))
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          expect(completed.body.order.id).toMatch(/^ord_/)
          const intents = intentsOf(fake(), session.id)
          expect(intents).toHaveLength(1)
          expect(intents[0]).toMatchObject({
            status: "succeeded",
            amount: total,
            currency: "usd",
            metadata: { checkout_session_id: session.id, payment_attempt: `${session.id}:1` }
          })
          const attempt = yield* attemptOf(session.id)
          expect([attempt?.state, attempt?.chargeId, attempt?.credentialRef]).toEqual([
            "succeeded",
            intents[0]!.id,
            token
          ])
          const keys = fake().requests({ method: "POST" }).filter((r) =>
            r.idempotencyKey?.startsWith(`${session.id}:1:`)
          ).map((r) => r.idempotencyKey)
          expect(new Set(keys)).toEqual(new Set([`${session.id}:1:create`, `${session.id}:1:confirm`]))
        }
      })
    ))

  it.effect("the handler-shaped payment_data of 2026-01-30 and 2026-04-17 (the handler offers 3-D Secure)", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        for (const version of ["2026-01-30", "2026-04-17"] as const) {
          const client = clientOf(version)
          const created = yield* client.created(createRequest(version))
          expect(created.capabilities.payment.handlers.map((h: { id: string }) => h.id)).toContain(STRIPE_HANDLER)
          const stripeHandler = created.capabilities.payment.handlers.find((h: { id: string }) =>
            h.id === STRIPE_HANDLER
          )
          expect(stripeHandler).toMatchObject({ psp: "stripe", config: { supports_3ds: true } })
          const updated = yield* client.update(created.id, updateRequest(version))
          expect(updated.body.status).toBe("ready_for_payment")
          const token = fake().grantToken().id
          const completed = yield* client.complete(
            created.id,
            completeRequest(version, token, { payment_data: sptPayment(token) })
          )
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          expect(succeededOf(fake(), created.id)).toHaveLength(1)
        }
      })
    ))

  it.effect("a card decline: 402 payment_declined with Stripe's reason, the PaymentIntent canceled, payable again", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake(), {
          behavior: "declines",
          declineCode: "insufficient_funds"
        })
        const declined = yield* complete(session.id, sptPayment(token))
        expect(declined.status).toBe(402)
        expect(declined.body).toMatchObject({ type: "processing_error", code: "payment_declined" })
        expect(declined.body.message).toMatch(/insufficient funds.*Nothing was charged/i)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["canceled"])
        const read = yield* get(`/checkout_sessions/${session.id}`)
        expect(read.body.status).toBe("ready_for_payment")
        expect(read.body.messages).toContainEqual(expect.objectContaining({ type: "error", code: "payment_declined" }))
        expect((yield* attemptOf(session.id))?.state).toBe("declined")
        // Payable again, with another token: a new attempt, a new PaymentIntent.
        const paid = yield* complete(session.id, sptPayment(fake().grantToken().id))
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["canceled", "succeeded"])
      })
    ))

  it.effect("3-D Secure asked by the issuer: a clear decline, the PaymentIntent canceled", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake(), { behavior: "requires_action" })
        const declined = yield* complete(session.id, sptPayment(token))
        expect(declined.status).toBe(402)
        expect(declined.body.message).toMatch(/3-D Secure/)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["canceled"])
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
      })
    ))

  it.effect("processing: the attempt stays pending (409, retry later); once Stripe settles, a retry gets the order", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session, token } = yield* readyWithToken(fake(), { behavior: "processing" })
        const first = yield* complete(session.id, sptPayment(token))
        expect(first.status).toBe(409)
        expect(first.headers.get("retry-after")).toBe("5")
        expect((yield* attemptOf(session.id))?.state).toBe("pending")
        const again = yield* complete(session.id, sptPayment(token))
        expect(again.status).toBe(409)
        const [intent] = intentsOf(fake(), session.id)
        fake().settleProcessing(intent!.id, "succeeded")
        const paid = yield* complete(session.id, sptPayment(token))
        expect(paid.status).toBe(200)
        expect(paid.body.status).toBe("completed")
        expect(intentsOf(fake(), session.id)).toHaveLength(1)
      })
    ))

  it.effect("an expired, revoked or over-limit token: 422 at the credential's JSONPath, the session payable", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const cases = [
          { grant: { expiresAt: 1 }, revoke: false },
          { grant: {}, revoke: true },
          { grant: { maxAmount: 100 }, revoke: false }
        ]
        for (const { grant, revoke } of cases) {
          const { session, token } = yield* readyWithToken(fake(), grant)
          if (revoke) fake().revokeToken(token)
          for (
            const [shape, param] of [[sptPayment, "$.payment_data.instrument.credential.token"], [
              legacySpt,
              "$.payment_data.token"
            ]] as const
          ) {
            const refused = yield* complete(session.id, shape(token))
            expect(refused.status).toBe(422)
            expect(refused.body).toMatchObject({ type: "invalid_request", code: "payment_declined", param })
            const read = yield* get(`/checkout_sessions/${session.id}`)
            expect(read.body.status).toBe("ready_for_payment")
            expect(read.body.messages).toContainEqual(expect.objectContaining({ type: "error", param }))
          }
          expect(succeededOf(fake(), session.id)).toHaveLength(0)
          expect(intentsOf(fake(), session.id).every((pi) => pi.status === "canceled")).toBe(true)
        }
      })
    ))

  it.effect("2025-09-29 `provider: stripe` with a test token still goes to the built-in processor", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session } = yield* readyWithToken(fake())
        const paid = yield* complete(session.id, { token: "tok_visa", provider: "stripe" })
        expect(paid.status).toBe(200)
        expect(intentsOf(fake(), session.id)).toHaveLength(0)
      })
    ))
})

describe("Stripe not configured", () => {
  it.effect("its handler is not offered, and an spt_ token is refused (422) without a call", () =>
    Effect.gen(function*() {
      const client = clientOf("2026-04-17")
      const created = yield* client.created(createRequest("2026-04-17"))
      expect(created.capabilities.payment.handlers.map((h: { id: string }) => h.id)).toEqual(["card_tokenized"])
      const session = (yield* post("/checkout_sessions", {
        items: [{ id: "mug-ceramic", quantity: 1 }],
        buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
        fulfillment_address: {
          name: "Ada Lovelace",
          line_one: "1 Main Street",
          city: "New York",
          state: "NY",
          country: "US",
          postal_code: "10001"
        }
      })).body
      const before = fake().requests().length
      const handler = yield* complete(session.id, sptPayment("spt_unconfigured"))
      expect(handler.status).toBe(400)
      const legacy = yield* complete(session.id, legacySpt("spt_unconfigured"))
      expect(legacy.status).toBe(422)
      expect(legacy.body.message).toMatch(/does not accept Stripe/)
      expect(fake().requests().length).toBe(before)
    }).pipe(Effect.provide(testApp())))
})
