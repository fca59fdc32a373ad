/**
 * When 3-D Secure is on offer, through HTTP: the merchant's capabilities advertise it only when the
 * payment provider carries it out (else a card that needs it is declined), a merchant requiring it
 * always flags an agent without it (`intervention_required`), and 2025-09-29, which has no
 * authentication flow, declines a card that needs it with a message and reads a waiting session
 * back without its metadata.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PaymentsLive } from "../../src/app/server.ts"
import { Catalog, fixedCatalog } from "../../src/catalog/catalog-service.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import {
  amountOf,
  clientOf,
  completeRequest,
  createRequest,
  type Json,
  updateRequest
} from "../support/acp-fixtures.ts"
import { demoCatalogFile, snapshotOf } from "../support/fixtures.ts"
import { address, buyer, createReadySession, get, post } from "../support/http.ts"
import { CHALLENGE_CARD, delegateCard, PLAIN_CARD } from "../support/three-d-secure.ts"
import { charges, requiringAuthentication, run } from "./three-d-secure-fixtures.ts"

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
      { catalog: Layer.succeed(Catalog, fixedCatalog(catalog)) }
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
