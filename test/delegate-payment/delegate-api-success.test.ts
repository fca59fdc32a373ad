/**
 * POST /agentic_commerce/delegate_payment through the HTTP application (in memory, TestClock): a
 * valid request is 201 with a `vt_` id, the Clock's time and the metadata echo (the allowance's
 * merchant_id, the Idempotency-Key), and the card is stored encrypted; network tokens skip the
 * card-number checks.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import { Vault } from "../../src/delegate-payment/vault.ts"
import { CARD_CVC, CARD_NUMBER, delegateRequestWith, NOW, validDelegateRequest } from "../support/delegate.ts"
import { run, runLive, tokenize } from "./delegate-api-fixtures.ts"

describe("POST /agentic_commerce/delegate_payment: success", () => {
  it.effect("201 with a vt_ id, the Clock's time and the metadata echo; the card is stored encrypted", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(validDelegateRequest())
      expect(response.status).toBe(201)
      expect(response.body.id).toMatch(/^vt_[0-9A-Za-z]{22}$/)
      expect(response.body).toEqual({
        id: response.body.id,
        created: "2026-01-30T12:00:00.000Z",
        metadata: { source: "agent", merchant_id: "merchant_test" }
      })
      expect(response.text).not.toContain(CARD_NUMBER)

      const store = yield* VaultStore
      const record = Option.getOrThrow(yield* store.getToken(response.body.id))
      expect(record).toMatchObject({
        id: response.body.id,
        clientKeyId: expect.stringMatching(/^key_/),
        allowance: {
          reason: "one_time",
          max_amount: 2000,
          currency: "usd",
          checkout_session_id: "cs_123",
          merchant_id: "merchant_test",
          expiresAt: Date.parse("2099-01-30T13:00:00Z")
        },
        riskSignals: [{ type: "card_testing", score: 10, action: "authorized" }],
        metadata: { source: "agent", merchant_id: "merchant_test" },
        createdAt: NOW,
        brand: "visa",
        last4: "4242",
        funding: "credit",
        state: "active"
      })
      expect(JSON.stringify(record)).not.toContain(CARD_NUMBER)
      expect(JSON.stringify(record)).not.toContain(`"${CARD_CVC}"`)

      const card = yield* (yield* Vault).revealCard(record)
      expect(card).toMatchObject({
        card_number_type: "fpan",
        number: CARD_NUMBER,
        cvc: CARD_CVC,
        exp_month: "12",
        exp_year: "2030",
        name: "Jane Doe"
      })
      expect(card.billing_address?.postal_code).toBe("62701")
    })))

  it.effect("metadata: request pairs echoed, merchant_id from the allowance wins", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.metadata = { order_ref: "A-1", merchant_id: "spoofed", "ünï": "cödé ✓" }
        r.allowance.merchant_id = "merchant_9"
      })
      const plain = yield* tokenize(body)
      expect(plain.status).toBe(201)
      expect(plain.body.metadata).toEqual({ order_ref: "A-1", merchant_id: "merchant_9", "ünï": "cödé ✓" })
      const empty = yield* tokenize(delegateRequestWith((r) => {
        r.metadata = {}
      }))
      expect(empty.body.metadata).toEqual({ merchant_id: "merchant_test" })
    })))

  it.effect("metadata: an idempotency_key the client sends is not echoed as if it were the header", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(delegateRequestWith((r) => {
        r.metadata = { idempotency_key: "spoofed", note: "emoji 😀 kept" }
      }))
      expect(response.status).toBe(201)
      expect(response.body.metadata).toEqual({ note: "emoji 😀 kept", merchant_id: "merchant_test" })
    })))

  it.effect("payment_method.metadata is any JSON object; expires_at may be the last instant of year 9999", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(delegateRequestWith((r) => {
        r.payment_method.metadata = { bank: true, tries: 2, issuer: { country: "US" }, tags: ["a"], none: null }
        r.allowance.expires_at = "9999-12-31T23:59:59.999Z"
      }))
      expect(response.status).toBe(201)
    })))

  // Real clock: the idempotency middleware in front of every POST keeps a lease on the Clock.
  it.live("metadata: idempotency_key added when an Idempotency-Key is given", () =>
    runLive(Effect.gen(function*() {
      const keyed = yield* tokenize(validDelegateRequest(), { "idempotency-key": "idem_abc_123" })
      expect(keyed.status).toBe(201)
      expect(keyed.body.metadata).toEqual({
        source: "agent",
        merchant_id: "merchant_test",
        idempotency_key: "idem_abc_123"
      })
    })))

  it.effect("network tokens skip the card-number checks; brand is detected when not displayed; unknown fields are ignored", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(delegateRequestWith((r) => {
        r.payment_method.card_number_type = "network_token"
        r.payment_method.number = "5555555555554440" // fails Luhn: fine for a network token
        delete r.payment_method.iin
        delete r.payment_method.display_last4
        delete r.payment_method.display_brand
        r.payment_method.cryptogram = "AAAAAAAA"
        r.future_field = { x: 1 }
      }))
      expect(response.status).toBe(201)
      const record = Option.getOrThrow(yield* (yield* VaultStore).getToken(response.body.id))
      expect(record).toMatchObject({ brand: "mastercard", last4: "4440" })
    })))
})
