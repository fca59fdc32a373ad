/**
 * The UCP REST checkout through the whole app: negotiation with the agent's profile, the lifecycle
 * (create → update → complete, cancel), fulfillment, discounts, business outcomes as messages, protocol
 * errors in UCP's shape, idempotency, and one session per protocol.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { importJwk } from "../../src/shared/http-signatures/keys.ts"
import { verifyUcpMessage } from "../../src/shared/http-signatures/ucp.ts"
import { get as acpGet, post as acpPost } from "../support/http.ts"
import {
  amountOf,
  destination,
  instrument,
  type Json,
  type UcpAgent,
  ucpAgent,
  ucpBuyer,
  withApp
} from "../support/ucp-agent.ts"
import { capability, platformProfile } from "./profile-fixtures.ts"

const shirt = { item: { id: "tshirt-classic" }, quantity: 2 }

const created = (agent: UcpAgent, body: Json) =>
  Effect.map(agent.create(body), (response) => {
    expect(response.status, response.text).toBe(201)
    return response.body as Json
  })

/** A session shipped to `destination` with `option` chosen: ready to complete. */
const readySession = (agent: UcpAgent, option = "standard") =>
  Effect.gen(function*() {
    const session = yield* created(agent, {
      line_items: [shirt],
      buyer: ucpBuyer,
      fulfillment: { methods: [{ type: "shipping", destinations: [destination] }] }
    })
    const updated = yield* agent.update(session.id, {
      line_items: [{ id: session.line_items[0].id, ...shirt }],
      buyer: ucpBuyer,
      fulfillment: {
        methods: [{
          id: "shipping",
          line_item_ids: [session.line_items[0].id],
          destinations: [{ id: "dest_1", ...destination }],
          selected_destination_id: "dest_1",
          groups: [{ id: "group_1", selected_option_id: option }]
        }]
      }
    })
    expect(updated.status, updated.text).toBe(200)
    return updated.body as Json
  })

describe("UCP checkout: the lifecycle", () => {
  it.scoped("create, update to ready, tokenize, complete: the order, the same core as ACP", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const session = yield* created(agent, {
        line_items: [shirt],
        buyer: ucpBuyer,
        fulfillment: { methods: [{ type: "shipping", destinations: [destination] }] }
      })
      expect(session.id).toMatch(/^chk_/)
      expect(session.ucp).toMatchObject({ version: "2026-04-08", status: "success" })
      expect(Object.keys(session.ucp.capabilities).sort()).toEqual([
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.discount",
        "dev.ucp.shopping.fulfillment"
      ])
      // An address and a buyer: the cheapest option is chosen, as for ACP.
      expect(session.status).toBe("ready_for_complete")
      expect(session.currency).toBe("USD")
      expect(session.line_items[0]).toMatchObject({
        item: { id: "tshirt-classic", title: "Classic Cotton T-Shirt", price: 2500 },
        quantity: 2
      })
      expect(amountOf(session.totals, "subtotal")).toBe(5000)
      const group = session.fulfillment.methods[0].groups[0]
      expect(group.options.map((o: Json) => o.id)).toContain("express")
      expect(group.selected_option_id).toBe("standard")
      const ready = yield* readySession(agent, "express")
      expect(ready.status).toBe("ready_for_complete")
      expect(ready.fulfillment.methods[0].groups[0].selected_option_id).toBe("express")
      expect(amountOf(ready.totals, "fulfillment")).toBeGreaterThan(amountOf(session.totals, "fulfillment")!)
      const total = amountOf(ready.totals, "total")!
      const entries = ready.totals.filter((t: Json) => t.type !== "total").reduce(
        (s: number, t: Json) => s + t.amount,
        0
      )
      expect(entries).toBe(total)
      const token = yield* agent.tokenize(ready.id, total)
      const completed = yield* agent.complete(ready.id, { payment: { instruments: [instrument(token)] } })
      expect(completed.status, completed.text).toBe(200)
      expect(completed.body.status).toBe("completed")
      expect(completed.body.order.id).toMatch(/^ord_/)
      expect(completed.body.continue_url).toBeUndefined()
      // Signed with the key the business profile publishes: the exact bytes, and nothing else, verify.
      const profile = yield* acpGet("/.well-known/ucp", { auth: false, version: false })
      const jwk = profile.body.signing_keys[0]
      const key = Either.getOrThrow(importJwk(jwk))
      const response = (text: string) => ({
        status: completed.status,
        headers: {
          "content-type": completed.headers.get("content-type")!,
          "content-digest": completed.headers.get("content-digest")!,
          "signature-input": completed.headers.get("signature-input")!,
          signature: completed.headers.get("signature")!
        },
        body: text
      })
      expect(completed.headers.get("signature-input")).toContain(`keyid="${jwk.kid}"`)
      const verified = verifyUcpMessage(response(completed.text), {
        resolveKey: (kid) => (kid === jwk.kid ? key : undefined)
      })
      expect(Either.isRight(verified), JSON.stringify(verified)).toBe(true)
      const tampered = verifyUcpMessage(response(completed.text.replace("completed", "canceled")), {
        resolveKey: () => key
      })
      expect(Either.isLeft(tampered) && tampered.left.code).toBe("digest_mismatch")
      // The profile was fetched once: every later request of this agent was negotiated from the cache.
      expect(agent.server.hits()).toBe(1)
      // The order is the merchant's like any other.
      const order = yield* acpGet(`/orders/${completed.body.order.id}`)
      expect(order.status).toBe(200)
      expect(order.body.checkout_session_id).toBe(ready.id)
    })))

  it.scoped("cancel: canceled, then final (409 in UCP's error shape)", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const session = yield* created(agent, { line_items: [{ item: { id: "ebook-field-guide" }, quantity: 1 }] })
      const canceled = yield* agent.cancel(session.id)
      expect(canceled.status).toBe(200)
      expect(canceled.body.status).toBe("canceled")
      const again = yield* agent.cancel(session.id)
      expect(again.status).toBe(409)
      expect(again.body).toEqual({ code: "session_canceled", content: expect.any(String) })
    })))
})

describe("UCP checkout: business outcomes and refusals", () => {
  it.scoped("an unknown item: no session, an unrecoverable message (200)", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const response = yield* agent.create({ line_items: [{ item: { id: "no-such-thing" }, quantity: 1 }] })
      expect(response.status).toBe(200)
      expect(response.body.ucp.status).toBe("error")
      expect(response.body.messages).toEqual([{
        type: "error",
        code: "item_unavailable",
        path: "$.line_items[0].item.id",
        content: expect.any(String),
        severity: "unrecoverable"
      }])
    })))

  it.scoped("bad input: 400 with the JSONPath, in UCP's shape", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const response = yield* agent.create({ line_items: [{ item: { id: "tshirt-classic" }, quantity: 0 }] })
      expect(response.status).toBe(400)
      expect(response.body).toEqual({
        code: expect.any(String),
        content: expect.any(String),
        path: "$.line_items[0].quantity"
      })
    })))

  it.scoped("a physical item without the fulfillment extension: refused as an outcome, nothing created", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent(platformProfile({
        capabilities: { "dev.ucp.shopping.checkout": [capability("checkout")] }
      }))
      const response = yield* agent.create({ line_items: [shirt] })
      expect(response.status).toBe(200)
      expect(response.body.messages[0]).toMatchObject({ code: "fulfillment_required", severity: "unrecoverable" })
      const digital = yield* agent.create({ line_items: [{ item: { id: "ebook-field-guide" }, quantity: 1 }] })
      expect(digital.status).toBe(201)
      expect(digital.body.fulfillment).toBeUndefined()
      expect(digital.body.discounts).toBeUndefined()
      const discounts = yield* agent.update(digital.body.id, {
        line_items: [{ item: { id: "ebook-field-guide" }, quantity: 1 }],
        discounts: { codes: ["SAVE10"] }
      })
      expect(discounts.status).toBe(400)
      expect(discounts.body.path).toBe("$.discounts")
    })))

  it.scoped("no UCP-Agent: 400 invalid_profile_url; an unreachable profile: 424 profile_unreachable", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const missing = yield* agent.create({ line_items: [shirt] }, { headers: { "ucp-agent": "" } })
      expect(missing.status).toBe(400)
      expect(missing.body.code).toBe("invalid_profile_url")
      const nowhere = yield* agent.create({ line_items: [shirt] }, {
        headers: { "ucp-agent": `profile="http://127.0.0.1:1/profile.json"` }
      })
      expect(nowhere.status).toBe(424)
      expect(nowhere.body.code).toBe("profile_unreachable")
    })))

  it.scoped("an ACP session is not found over UCP, and a UCP session not over ACP", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const ucp = yield* created(agent, { line_items: [{ item: { id: "ebook-field-guide" }, quantity: 1 }] })
      const viaAcp = yield* acpGet(`/checkout_sessions/${ucp.id}`)
      expect(viaAcp.status).toBe(404)
      expect(viaAcp.body.message).toContain("/ucp/checkout-sessions/")
      const acp = yield* acpPost("/checkout_sessions", { items: [{ id: "ebook-field-guide", quantity: 1 }] })
      const viaUcp = yield* agent.get(acp.body.id)
      expect(viaUcp.status).toBe(404)
      expect(viaUcp.body.code).toBe("not_found")
    })))

  it.scoped("idempotency: a replay answers the same; the key reused with another body is 409; no key is 400", () =>
    withApp(Effect.gen(function*() {
      const agent = yield* ucpAgent()
      const body = { line_items: [{ item: { id: "ebook-field-guide" }, quantity: 1 }] }
      const key = { "idempotency-key": "3f0c2e6c-8a55-4f3b-9a53-5b7f2a9d1c11" }
      const first = yield* agent.create(body, { headers: key })
      const replay = yield* agent.create(body, { headers: key })
      expect(replay.status).toBe(201)
      expect(replay.body.id).toBe(first.body.id)
      const other = yield* agent.create({ line_items: [{ item: { id: "ebook-field-guide" }, quantity: 2 }] }, {
        headers: key
      })
      expect(other.status).toBe(409)
      expect(other.body.code).toBe("idempotency_conflict")
      const none = yield* agent.send("POST", "/ucp/checkout-sessions", body, { headers: { "idempotency-key": "" } })
      expect(none.status).toBe(400)
    })))
})
