/**
 * 3-D Secure on the merchant side, through HTTP in every version that has the flow: a card its
 * issuer enrolls puts the session in `authentication_required` (nothing charged, stock held);
 * complete then needs the agent's result: an authenticated one pays (challenge or frictionless),
 * one that did not authenticate makes the session payable again. An update drops the requirement,
 * a replayed complete answers the same session, and an agent without 3ds is declined with a
 * message.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { clientOf, completeRequest, LINE_ITEMS_VERSIONS } from "../support/acp-fixtures.ts"
import {
  ATTEMPTED_CARD,
  authenticateCard,
  CHALLENGE_CARD,
  delegateCard,
  FAILING_CARD,
  FRICTIONLESS_CARD,
  PLAIN_CARD
} from "../support/three-d-secure.ts"
import { charges, readySession, refusal, requiringAuthentication, run } from "./three-d-secure-fixtures.ts"

/** The units all sessions hold now. */
const reservedUnits = Effect.gen(function*() {
  const store = yield* CheckoutStore
  const levels = yield* store.inventory.stockLevels(yield* Clock.currentTimeMillis)
  return levels.reduce((sum, level) => sum + level.reserved, 0)
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

  it.effect("the card's scheme comes from its number, whatever brand the agent displays", () =>
    run(Effect.gen(function*() {
      for (const displayBrand of ["Visa", "discover"]) {
        const { id, total } = yield* readySession(client)
        const token = yield* delegateCard(version, id, CHALLENGE_CARD, total, (body) => {
          body.payment_method.display_brand = displayBrand
        })
        const answer = yield* client.complete(id, completeRequest(version, token))
        expect(answer.status, answer.text).toBe(200)
        expect(answer.body.status).toBe("authentication_required")
        expect(answer.body.authentication_metadata.directory_server).toBe("visa")
        // And the result of authenticating that card pays.
        const authenticated = yield* authenticateCard({ number: CHALLENGE_CARD, sessionId: id, amount: total })
        const paid = yield* client.complete(
          id,
          completeRequest(version, token, { authentication_result: authenticated.result })
        )
        expect(paid.body.status, paid.text).toBe("completed")
      }
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

  it.effect("an attempted authentication (A) pays as attempt_acknowledged; the charge carries ECI 06", () =>
    run(Effect.gen(function*() {
      const { id, token, total } = yield* requiringAuthentication(client, ATTEMPTED_CARD)
      const { result } = yield* authenticateCard({ number: ATTEMPTED_CARD, sessionId: id, amount: total })
      expect(result.outcome).toBe("attempt_acknowledged")
      const paid = yield* client.complete(id, completeRequest(version, token, { authentication_result: result }))
      expect(paid.body.status, paid.text).toBe("completed")
      expect(yield* charges).toEqual([expect.objectContaining({
        amount: total,
        outcome: "approved",
        authentication: { eci: "06", dsTransId: result.outcome_details.transaction_id }
      })])
    })))

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
