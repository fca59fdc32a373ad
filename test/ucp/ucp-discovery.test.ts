/**
 * UCP discovery and the extensions that change a checkout: the business profile (its schema, caching,
 * signing keys, the vault handler and its spec), discount codes (applied and rejected), buyer consent,
 * context and eligibility claims; and our schema transcription refusing what the release refuses.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { get } from "../support/http.ts"
import { type Json, ucpAgent, ucpBuyer, withApp } from "../support/ucp-agent.ts"
import { assertUcp } from "../support/ucp-schemas.ts"
import { capability, platformProfile } from "./profile-fixtures.ts"

const ebook = { item: { id: "ebook-field-guide" }, quantity: 1 }

describe("the business profile", () => {
  it.effect("/.well-known/ucp: the release's business profile, public and cached an hour, with our signing key", () =>
    withApp(Effect.gen(function*() {
      const response = yield* get("/.well-known/ucp", { auth: false, version: false })
      expect(response.status).toBe(200)
      expect(response.headers.get("cache-control")).toBe("public, max-age=3600")
      const profile = response.body as Json
      expect(profile.ucp.version).toBe("2026-04-08")
      expect(profile.ucp.services["dev.ucp.shopping"][0]).toMatchObject({
        transport: "rest",
        endpoint: "https://merchant.test/ucp"
      })
      expect(Object.keys(profile.ucp.capabilities)).toEqual(expect.arrayContaining([
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.fulfillment",
        "dev.ucp.shopping.discount",
        "dev.ucp.shopping.buyer_consent",
        "dev.ucp.shopping.order"
      ]))
      expect(profile.signing_keys).toEqual([expect.objectContaining({ kid: "test_key_1", crv: "P-256", alg: "ES256" })])
      expect(JSON.stringify(profile)).not.toContain("\"d\"")
      const [handler] = profile.ucp.payment_handlers["test.merchant.payments.vault_token"]
      expect(handler).toMatchObject({ id: "card_tokenized", config: { business_id: "merchant_test" } })
      const spec = yield* get(new URL(handler.spec).pathname, { auth: false, version: false })
      expect(spec.status).toBe(200)
      expect(spec.text).toContain("vt_")
      const schema = yield* get(new URL(handler.schema).pathname, { auth: false, version: false })
      expect(schema.body.$defs.credential.properties.type).toEqual({ const: "token" })
    })))
})

describe("the checkout's extensions", () => {
  it.scoped("discount codes: applied (negative total line), rejected as a warning at its code", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const response = yield* agent.create({ line_items: [ebook], discounts: { codes: ["WELCOME10", "NOPE"] } })
      expect(response.status, response.text).toBe(201)
      const session = response.body as Json
      expect(session.discounts.codes).toEqual(["WELCOME10", "NOPE"])
      expect(session.discounts.applied).toEqual([
        expect.objectContaining({ code: "WELCOME10", title: "Welcome, 10 % off", amount: 200 })
      ])
      expect(session.totals.find((t: Json) => t.type === "items_discount")?.amount).toBe(-200)
      expect(session.messages).toContainEqual(expect.objectContaining({
        type: "warning",
        code: "discount_code_invalid",
        path: "$.discounts.codes[1]"
      }))
    })))

  it.scoped("buyer consent is kept and shown only when negotiated; eligibility claims are warned, not applied", () =>
    withApp(Effect.gen(function*() {
      const consenting = yield* ucpAgent(platformProfile({
        capabilities: {
          "dev.ucp.shopping.checkout": [capability("checkout")],
          "dev.ucp.shopping.buyer_consent": [capability("buyer_consent", { extends: "dev.ucp.shopping.checkout" })]
        }
      }))
      const consent = { marketing: false, analytics: true }
      const created = yield* consenting.create({
        line_items: [ebook],
        buyer: { ...ucpBuyer, consent },
        context: { address_country: "US", eligibility: ["com.example.loyalty_gold"] }
      })
      expect(created.status, created.text).toBe(201)
      expect(created.body.buyer.consent).toEqual(consent)
      expect(created.body.context.address_country).toBe("US")
      expect(created.body.messages).toContainEqual(expect.objectContaining({
        type: "warning",
        code: "eligibility_not_accepted",
        path: "$.context.eligibility[0]"
      }))
      const plain = yield* ucpAgent(platformProfile({
        capabilities: { "dev.ucp.shopping.checkout": [capability("checkout")] }
      }))
      const refused = yield* plain.create({ line_items: [ebook], buyer: { ...ucpBuyer, consent } })
      expect(refused.status).toBe(400)
      expect(refused.body.path).toBe("$.buyer.consent")
    })))

  it.scoped("a credential before complete is refused (never stored); one sent to complete is never echoed", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const withCredential = yield* agent.create({
        line_items: [ebook],
        payment: {
          instruments: [{
            id: "i1",
            handler_id: "card_tokenized",
            type: "card",
            credential: { type: "token", token: "vt_x" }
          }]
        }
      })
      expect(withCredential.status).toBe(400)
      expect(withCredential.body.path).toBe("$.payment.instruments[0].credential")
      expect(withCredential.text).not.toContain("vt_x")
    })))
})

describe("our transcription of the release's schemas", () => {
  const valid = {
    ucp: { version: "2026-04-08", status: "success", payment_handlers: {} },
    id: "chk_1",
    line_items: [],
    status: "incomplete",
    currency: "USD",
    totals: [{ type: "subtotal", amount: 0 }, { type: "total", amount: 0 }],
    links: []
  }
  it("accepts a minimal checkout and refuses what the release refuses", () => {
    expect(() => assertUcp("checkout", valid, "minimal")).not.toThrow()
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      ["a stray field", { ...valid, extra: 1 }],
      ["a positive discount", { ...valid, totals: [...valid.totals, { type: "discount", amount: 100 }] }],
      ["two totals", { ...valid, totals: [...valid.totals, { type: "total", amount: 0 }] }],
      ["an unknown total type without display_text", {
        ...valid,
        totals: [...valid.totals, { type: "gift", amount: 1 }]
      }],
      ["a lowercase currency", { ...valid, currency: "usd" }],
      ["an unknown status", { ...valid, status: "ready_for_payment" }],
      ["an error without severity", { ...valid, messages: [{ type: "error", code: "x", content: "y" }] }]
    ]
    for (const [what, body] of cases) expect(() => assertUcp("checkout", body, what), what).toThrow()
  })
})
