/**
 * 3-D Secure on the merchant side, through HTTP in every version that has the flow: a card its
 * issuer enrolls puts the session in `authentication_required` (nothing charged, stock held);
 * complete then needs the agent's result, which pays only when the authentication provider made
 * it for this session, amount, currency, merchant and card, and only once; a result that did not
 * authenticate makes the session payable again. Older versions and agents without 3ds are
 * declined with a message.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, TestClock } from "effect"
import { PaymentsLive } from "../../src/app/server.ts"
import { Catalog } from "../../src/catalog/catalog-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import {
  amountOf,
  type Client,
  clientOf,
  completeRequest,
  createRequest,
  type Json,
  LINE_ITEMS_VERSIONS,
  NOW,
  updateRequest
} from "../support/acp-fixtures.ts"
import { demoCatalogFile, snapshotOf } from "../support/fixtures.ts"
import { address, buyer, createReadySession, get, post, testApp, type TestAppOptions } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import {
  authenticateCard,
  CHALLENGE_CARD,
  delegateCard,
  FAILING_CARD,
  FRICTIONLESS_CARD,
  PLAIN_CARD
} from "../support/three-d-secure.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), testApp(options)) as Effect.Effect<A, E, never>

/** A session ready for payment and its total. */
const readySession = (client: Client, create: Json = {}) =>
  Effect.gen(function*() {
    const created = yield* client.created(createRequest(client.version, create))
    const updated = yield* client.update(created.id, updateRequest(client.version))
    expect(updated.body.status).toBe("ready_for_payment")
    return { id: created.id as string, total: amountOf(updated.body.totals, "total")! }
  })

/** A session of `client` that required authentication for `card`: its id, total and vt_ token. */
const requiringAuthentication = (client: Client, card: string) =>
  Effect.gen(function*() {
    const { id, total } = yield* readySession(client)
    const token = yield* delegateCard(client.version, id, card, total)
    const answer = yield* client.complete(id, completeRequest(client.version, token))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.status).toBe("authentication_required")
    return { id, total, token, session: answer.body as Json }
  })

const charges = Effect.flatMap(ChargeStore, (store) => store.listCharges)

const reservedUnits = Effect.gen(function*() {
  const store = yield* CheckoutStore
  const levels = yield* store.inventory.stockLevels(yield* Clock.currentTimeMillis)
  return levels.reduce((sum, level) => sum + level.reserved, 0)
})

const refusal = (response: { status: number; body: any }) => ({
  status: response.status,
  code: response.body?.code,
  param: response.body?.param
})

describe.each(LINE_ITEMS_VERSIONS)("3-D Secure in %s", (version) => {
  const client = clientOf(version)

  it.effect("a card that needs it: authentication_required with its metadata, nothing charged, stock held", () =>
    run(Effect.gen(function*() {
      const { session } = yield* requiringAuthentication(client, CHALLENGE_CARD)
      expect(session.authentication_metadata).toMatchObject({
        acquirer_details: {
          acquirer_bin: "400000",
          acquirer_country: "US",
          acquirer_merchant_id: "merchant_test",
          merchant_name: "merchant_test"
        },
        directory_server: "visa",
        flow_preference: { type: "frictionless", frictionless: { type: "low_risk" } }
      })
      if (version === "2026-01-30") {
        // This version requires the browser channel: built from the agent's risk signals.
        expect(session.authentication_metadata.channel).toEqual({
          type: "browser",
          browser: {
            accept_header: "*/*",
            ip_address: "203.0.113.7",
            javascript_enabled: false,
            language: "en-US",
            user_agent: "Mozilla/5.0 (agent)"
          }
        })
      } else {
        expect(session.authentication_metadata.channel).toBeUndefined()
      }
      expect(session.order).toBeUndefined()
      expect(yield* charges).toEqual([])
      // The session still holds its units: a t-shirt and two mugs.
      expect(yield* reservedUnits).toBe(3)
      // GET shows the same.
      const read = yield* client.get(session.id)
      expect(read.body.status).toBe("authentication_required")
      expect(read.body.authentication_metadata).toEqual(session.authentication_metadata)
    })))

  it.effect("complete without authentication_result while it waits: 400 requires_3ds", () =>
    run(Effect.gen(function*() {
      const { id, token } = yield* requiringAuthentication(client, CHALLENGE_CARD)
      const again = yield* client.complete(id, completeRequest(version, token))
      expect(again.status).toBe(400)
      expect(again.body).toEqual({
        type: "invalid_request",
        code: "requires_3ds",
        message: expect.stringContaining("authentication_result"),
        param: "$.authentication_result"
      })
      expect((yield* client.get(id)).body.status).toBe("authentication_required")
    })))

  for (const [card, name] of [[CHALLENGE_CARD, "challenge"], [FRICTIONLESS_CARD, "frictionless"]] as const) {
    it.effect(`${name}: the authenticated result pays; the charge carries its ECI and transaction id`, () =>
      run(Effect.gen(function*() {
        const { id, token, total } = yield* requiringAuthentication(client, card)
        const { result } = yield* authenticateCard({ number: card, sessionId: id, amount: total })
        expect(result.outcome).toBe("authenticated")
        const paid = yield* client.complete(id, completeRequest(version, token, { authentication_result: result }))
        expect(paid.status, paid.text).toBe(200)
        expect(paid.body.status).toBe("completed")
        expect(paid.body.order.id).toMatch(/^ord_/)
        expect(paid.body.authentication_metadata).toBeUndefined()
        expect(yield* charges).toEqual([expect.objectContaining({
          amount: total,
          outcome: "approved",
          authentication: {
            eci: result.outcome_details.electronic_commerce_indicator,
            dsTransId: result.outcome_details.transaction_id
          }
        })])
      })))
  }

  it.effect("a denied result: 402, no charge, the session payable again with another card", () =>
    run(Effect.gen(function*() {
      const { id, token, total } = yield* requiringAuthentication(client, FAILING_CARD)
      const { result } = yield* authenticateCard({ number: FAILING_CARD, sessionId: id, amount: total })
      expect(result).toEqual({ outcome: "denied" })
      const declined = yield* client.complete(id, completeRequest(version, token, { authentication_result: result }))
      expect(refusal(declined)).toEqual({ status: 402, code: "payment_declined", param: undefined })
      const read = (yield* client.get(id)).body
      expect(read.status).toBe("ready_for_payment")
      expect(read.authentication_metadata).toBeUndefined()
      expect(read.messages).toContainEqual(expect.objectContaining({
        type: "error",
        code: "payment_declined",
        param: "$.authentication_result"
      }))
      expect(yield* charges).toEqual([])
      const other = yield* delegateCard(client.version, id, PLAIN_CARD, total)
      const paid = yield* client.complete(id, completeRequest(version, other))
      expect(paid.body.status).toBe("completed")
    })))

  it.effect("abandoned, canceled and the other outcomes that did not authenticate are declined alike", () =>
    run(Effect.gen(function*() {
      for (const outcome of ["abandoned", "canceled", "rejected", "not_supported", "processing_error"]) {
        const { id, token } = yield* requiringAuthentication(client, CHALLENGE_CARD)
        const declined = yield* client.complete(
          id,
          completeRequest(version, token, { authentication_result: { outcome } })
        )
        expect(declined.status, outcome).toBe(402)
        expect((yield* client.get(id)).body.status).toBe("ready_for_payment")
      }
      expect(yield* charges).toEqual([])
    })))

  it.effect("a wrong challenge code: the result is denied and pays nothing", () =>
    run(Effect.gen(function*() {
      const { id, token, total } = yield* requiringAuthentication(client, CHALLENGE_CARD)
      const { result } = yield* authenticateCard({
        number: CHALLENGE_CARD,
        sessionId: id,
        amount: total,
        code: "000000"
      })
      expect(result.outcome).toBe("denied")
      const declined = yield* client.complete(id, completeRequest(version, token, { authentication_result: result }))
      expect(declined.status).toBe(402)
    })))

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

  it.effect("an update re-prices the session: the requirement is dropped until the next complete", () =>
    run(Effect.gen(function*() {
      const { id, token } = yield* requiringAuthentication(client, CHALLENGE_CARD)
      const updated = yield* client.update(id, { line_items: [{ id: "tshirt-classic", quantity: 1 }] })
      expect(updated.status, updated.text).toBe(200)
      expect(updated.body.status).toBe("ready_for_payment")
      expect(updated.body.authentication_metadata).toBeUndefined()
      const again = yield* client.complete(id, completeRequest(version, token))
      expect(again.body.status).toBe("authentication_required")
    })))

  it.effect("a replayed complete answers the same authentication_required session", () =>
    run(Effect.gen(function*() {
      const { id, total } = yield* readySession(client)
      const token = yield* delegateCard(client.version, id, CHALLENGE_CARD, total)
      const headers = { "idempotency-key": "idem_3ds_replay" }
      const first = yield* client.complete(id, completeRequest(version, token), { headers })
      const second = yield* client.complete(id, completeRequest(version, token), { headers })
      expect(second.status).toBe(200)
      expect(second.text).toBe(first.text)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
    })))

  it.effect("an agent that declared interventions without 3ds is declined with a message", () =>
    run(Effect.gen(function*() {
      const { id, total } = yield* readySession(client, {
        capabilities: { interventions: { supported: ["address_verification"] } }
      })
      const token = yield* delegateCard(client.version, id, CHALLENGE_CARD, total)
      const declined = yield* client.complete(id, completeRequest(version, token))
      expect(declined.status).toBe(402)
      expect(declined.body.message).toMatch(/3-D Secure.*did not declare 3ds/)
      const read = (yield* client.get(id)).body
      expect(read.status).toBe("ready_for_payment")
      expect(read.capabilities.interventions.supported).toEqual(["address_verification"])
      // A card that needs none still pays.
      const plain = yield* delegateCard(client.version, id, PLAIN_CARD, total)
      expect((yield* client.complete(id, completeRequest(version, plain))).body.status).toBe("completed")
    })))
})

describe("3-D Secure and the merchant's capabilities", () => {
  const client = clientOf("2026-04-17")

  it.effect("offered when the provider carries it out: interventions and the card handler say so", () =>
    run(Effect.gen(function*() {
      const created = yield* client.created(createRequest("2026-04-17"))
      expect(created.capabilities.interventions.supported).toContain("3ds")
      expect(created.capabilities.payment.handlers[0].config.supports_3ds).toBe(true)
    })))

  it.effect("a provider without 3-D Secure: not advertised, and a card that needs it is declined", () => {
    const noThreeDs = Layer.effect(
      PaymentProvider,
      Effect.map(PaymentProvider, (builtIn) => ({ ...builtIn, threeDSecure: false }))
    ).pipe(Layer.provide(PaymentsLive))
    return run(
      Effect.gen(function*() {
        const created = yield* client.created(createRequest("2026-04-17"))
        expect(created.capabilities.interventions.supported).not.toContain("3ds")
        expect(created.capabilities.payment.handlers[0].config.supports_3ds).toBe(false)
        const discovery = yield* get("/.well-known/acp.json", { auth: false, version: false })
        expect(discovery.body.capabilities.intervention_types).not.toContain("3ds")
        const updated = yield* client.update(created.id, updateRequest("2026-04-17"))
        const token = yield* delegateCard(
          "2026-04-17",
          created.id,
          CHALLENGE_CARD,
          amountOf(updated.body.totals, "total")!
        )
        const declined = yield* client.complete(created.id, completeRequest("2026-04-17", token))
        expect(declined.status).toBe(402)
        expect(declined.body.message).toMatch(/3-D Secure/)
      }),
      { payments: noThreeDs }
    )
  })

  it.effect("the merchant requires 3ds always: an agent without it gets intervention_required", () => {
    const file = demoCatalogFile()
    const catalog = snapshotOf({
      ...file,
      interventions: { ...file.interventions, supported: ["3ds"], required: ["3ds"], enforcement: "always" }
    })
    return run(
      Effect.gen(function*() {
        const without = yield* client.created(createRequest("2026-04-17", {
          capabilities: { interventions: { supported: ["biometric"] } }
        }))
        expect(without.messages).toContainEqual({
          type: "error",
          code: "intervention_required",
          param: "$.capabilities.interventions.supported",
          content_type: "plain",
          content: expect.stringContaining("3-D Secure")
        })
        const updated = yield* client.update(without.id, updateRequest("2026-04-17"))
        expect(updated.body.messages.map((m: Json) => m.code)).toContain("intervention_required")
        const able = yield* client.created(createRequest("2026-04-17", {
          capabilities: { interventions: { supported: ["3ds"] } }
        }))
        expect(able.messages.map((m: Json) => m.code)).not.toContain("intervention_required")
      }),
      { catalog: Layer.succeed(Catalog, catalog) }
    )
  })
})

describe("3-D Secure and 2025-09-29, which has no authentication flow", () => {
  it.effect("a card that needs it is declined with a message; the session stays payable", () =>
    run(Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])
      expect(session.status).toBe("ready_for_payment")
      const total = amountOf(session.totals, "total")!
      const token = yield* delegateCard("2025-09-29", session.id, CHALLENGE_CARD, total)
      const paymentData = {
        handler_id: "card_tokenized",
        instrument: { type: "card", credential: { type: "spt", token } }
      }
      const declined = yield* post(`/checkout_sessions/${session.id}/complete`, { payment_data: paymentData })
      expect(declined.status).toBe(402)
      expect(declined.body.code).toBe("payment_declined")
      expect(declined.body.message).toMatch(/3-D Secure.*API version/)
      const read = yield* get(`/checkout_sessions/${session.id}`)
      expect(read.body.status).toBe("ready_for_payment")
      expect(read.body.authentication_metadata).toBeUndefined()
      expect(yield* charges).toEqual([])
      const plain = yield* delegateCard("2025-09-29", session.id, PLAIN_CARD, total)
      const paid = yield* post(`/checkout_sessions/${session.id}/complete`, {
        payment_data: {
          ...paymentData,
          instrument: { ...paymentData.instrument, credential: { type: "spt", token: plain } }
        },
        buyer,
        fulfillment_address: address
      })
      expect(paid.status, paid.text).toBe(200)
      expect(paid.body.status).toBe("completed")
    })))

  it.effect("a session a 2026 agent left waiting for authentication reads back in 2025-09-29 without it", () =>
    run(Effect.gen(function*() {
      const { id } = yield* requiringAuthentication(clientOf("2026-04-17"), CHALLENGE_CARD)
      const read = yield* get(`/checkout_sessions/${id}`, { version: "2025-09-29" })
      expect(read.status).toBe(200)
      expect(read.body.status).toBe("authentication_required")
      expect(read.body.authentication_metadata).toBeUndefined()
    })))
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
