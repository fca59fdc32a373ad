/**
 * One session, whatever version reads it: created in the 2025-09-29 format and read in the
 * line-items format of 2026-01-30/2026-04-17 (and the other way round), it shows the same items,
 * address, option, buyer and totals; changes in one format keep what only the other carries. An
 * idempotent retry replays the first answer byte for byte.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  clientOf,
  completeRequest,
  createRequest,
  exampleBuyer,
  fulfillmentDetails,
  idempotencyKey,
  type Json,
  LINE_ITEMS_VERSIONS,
  runApp,
  shipTo,
  updateRequest
} from "../../support/acp-fixtures.ts"
import { address, buyer, get, post } from "../../support/http.ts"

const typesAndAmounts = (totals: ReadonlyArray<Json>) => totals.map((total) => [total.type, total.amount])

/** A 2025-09-29 client's session: two products, the buyer, the address, express shipping. */
const createdIn0929 = Effect.gen(function*() {
  const created = yield* post("/checkout_sessions", {
    items: [{ id: "tshirt-classic", quantity: 2 }, { id: "ebook-field-guide", quantity: 1 }],
    buyer,
    fulfillment_address: address
  })
  expect(created.status).toBe(201)
  const updated = yield* post(`/checkout_sessions/${created.body.id}`, { fulfillment_option_id: "express" })
  expect(updated.status).toBe(200)
  return updated.body as Json
})

describe("a session read in another version's format", () => {
  describe.each(LINE_ITEMS_VERSIONS)("created under 2025-09-29, read under %s", (version) => {
    it.effect("shows the same items, address, option, buyer and totals", () =>
      runApp(Effect.gen(function*() {
        const original = yield* createdIn0929
        const read = yield* clientOf(version).get(original.id)
        expect(read.status).toBe(200)
        const session = read.body
        expect(session.protocol).toEqual({ version })
        expect(session.status).toBe(original.status)
        expect(session.status).toBe("ready_for_payment")
        expect(session.line_items.map((line: Json) => [line.id, line.item.id, line.quantity])).toEqual(
          original.line_items.map((line: Json) => [line.id, line.item.id, line.item.quantity])
        )
        expect(session.line_items.map((line: Json) => typesAndAmounts(line.totals))).toEqual(
          original.line_items.map((line: Json) => [
            ["items_base_amount", line.base_amount],
            ["discount", line.discount],
            ["subtotal", line.subtotal],
            ["tax", line.tax],
            ["total", line.total]
          ])
        )
        expect(session.fulfillment_details).toEqual({ address })
        expect(session.selected_fulfillment_options).toEqual([
          { type: "shipping", option_id: "express", item_ids: ["tshirt-classic", "ebook-field-guide"] }
        ])
        expect(session.buyer).toEqual(buyer)
        expect(session.totals).toEqual(original.totals)
        expect(session.fulfillment_options.map((option: Json) => option.id)).toEqual(
          original.fulfillment_options.map((option: Json) => option.id)
        )
        expect(session.created_at).toBe(original.created_at)
        for (const field of ["items", "fulfillment_address", "fulfillment_option_id"]) {
          expect(session).not.toHaveProperty(field)
        }
      })))

    it.effect("can be updated and paid in the new format", () =>
      runApp(Effect.gen(function*() {
        const original = yield* createdIn0929
        const client = clientOf(version)
        const updated = yield* client.update(original.id, {
          selected_fulfillment_options: [
            { type: "shipping", option_id: "standard", item_ids: ["tshirt-classic", "ebook-field-guide"] }
          ]
        })
        expect(updated.status).toBe(200)
        const total = updated.body.totals.find((t: Json) => t.type === "total").amount
        const token = yield* client.delegate(original.id, total)
        const paid = yield* client.complete(original.id, completeRequest(version, token, { buyer: undefined }))
        expect(paid.status).toBe(200)
        expect(paid.body.status).toBe("completed")
        expect(paid.body.buyer).toEqual(buyer)
        // And the 2025-09-29 client sees it completed with the option chosen in the other format.
        const read = yield* get(`/checkout_sessions/${original.id}`)
        expect(read.body.status).toBe("completed")
        expect(read.body.fulfillment_option_id).toBe("standard")
      })))
  })

  describe.each(LINE_ITEMS_VERSIONS)("messages of a 2025-09-29 session read under %s", (version) => {
    it.effect("are in the reader's paths and kinds", () =>
      runApp(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", {
          items: [{ id: "tshirt-classic", quantity: 2 }],
          discounts: { codes: ["NOPE"] }
        })
        expect(created.body.messages.map((message: Json) => [message.type, message.param])).toEqual([
          ["error", "$.fulfillment_address"],
          ["error", "$.buyer"],
          ["info", "$.discounts.codes[0]"]
        ])
        const read = yield* clientOf(version).get(created.body.id)
        expect(read.body.messages.map((message: Json) => [message.type, message.code, message.param])).toEqual([
          ["error", "missing", "$.fulfillment_details.address"],
          ["error", "missing", "$.buyer"],
          ["warning", "discount_code_invalid", "$.discounts.codes[0]"]
        ])
      })))
  })

  describe.each(LINE_ITEMS_VERSIONS)("created under %s, read under 2025-09-29", (version) => {
    it.effect("shows the same items, address, option, buyer (its names) and totals", () =>
      runApp(Effect.gen(function*() {
        const client = clientOf(version)
        const created = yield* client.created(createRequest(version, {
          buyer: { ...exampleBuyer, account_type: "guest", customer_id: "cus_42" }
        }))
        const session = (yield* client.update(created.id, updateRequest(version, { buyer: undefined }))).body
        expect(session.status).toBe("ready_for_payment")

        const read = yield* get(`/checkout_sessions/${created.id}`)
        expect(read.status).toBe(200)
        const plain = read.body
        expect(plain.status).toBe("ready_for_payment")
        expect(plain.items).toBeUndefined() // the 2025-09-29 session shows line items only
        expect(plain.line_items.map((line: Json) => [line.id, line.item])).toEqual([
          [session.line_items[0].id, { id: "tshirt-classic", quantity: 1 }],
          [session.line_items[1].id, { id: "mug-ceramic", quantity: 2 }]
        ])
        expect(plain.fulfillment_address).toEqual(shipTo)
        expect(plain.fulfillment_option_id).toBe("express")
        expect(plain.buyer).toEqual(exampleBuyer)
        expect(plain.totals).toEqual(session.totals)
        for (const field of ["protocol", "fulfillment_details", "selected_fulfillment_options"]) {
          expect(plain).not.toHaveProperty(field)
        }
        // Read again in its own format, nothing it sent is lost.
        const again = yield* client.get(created.id)
        expect(again.body.buyer).toEqual({ ...exampleBuyer, account_type: "guest", customer_id: "cus_42" })
        expect(again.body.fulfillment_details).toEqual(fulfillmentDetails)
      })))

    it.effect("a 2025-09-29 update keeps the contact of the fulfillment details; its buyer replaces the profile", () =>
      runApp(Effect.gen(function*() {
        const client = clientOf(version)
        const created = yield* client.created(createRequest(version, {
          buyer: { ...exampleBuyer, account_type: "guest" }
        }))
        const changed = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_option_id: "express",
          buyer
        })
        expect(changed.status).toBe(200)
        const read = (yield* client.get(created.id)).body
        expect(read.fulfillment_details).toEqual(fulfillmentDetails)
        expect(read.selected_fulfillment_options[0].option_id).toBe("express")
        expect(read.buyer).toEqual(buyer)
      })))
  })
})

describe("idempotent retries replay the first answer byte for byte", () => {
  describe.each(LINE_ITEMS_VERSIONS)("under %s", (version) => {
    it.effect("create, update and complete retried with their key", () =>
      runApp(Effect.gen(function*() {
        const client = clientOf(version)
        const same = { headers: { "idempotency-key": idempotencyKey() } }
        const first = yield* client.create(createRequest(version), same)
        const retry = yield* client.create(createRequest(version), same)
        expect(first.status).toBe(201)
        expect([retry.status, retry.text]).toEqual([first.status, first.text])
        expect(retry.headers.get("idempotent-replayed")).toBe("true")
        const id = first.body.id

        const update = { headers: { "idempotency-key": idempotencyKey() } }
        const updated = yield* client.update(id, updateRequest(version), update)
        expect(updated.status).toBe(200)
        expect((yield* client.update(id, updateRequest(version), update)).text).toBe(updated.text)

        const token = yield* client.delegate(id, 7184)
        const complete = { headers: { "idempotency-key": idempotencyKey() } }
        const paid = yield* client.complete(id, completeRequest(version, token), complete)
        expect(paid.status).toBe(200)
        const replay = yield* client.complete(id, completeRequest(version, token), complete)
        expect([replay.status, replay.text]).toEqual([200, paid.text])
        // One session, one order.
        expect((yield* client.get(id)).body.status).toBe("completed")
      })))

    it.effect("a refusal is replayed too", () =>
      runApp(Effect.gen(function*() {
        const client = clientOf(version)
        const same = { headers: { "idempotency-key": idempotencyKey() } }
        const body = createRequest(version, { line_items: [{ id: "item_123" }] })
        const first = yield* client.create(body, same)
        expect(first.status).toBe(400)
        const retry = yield* client.create(body, same)
        expect([retry.status, retry.text]).toEqual([400, first.text])
      })))
  })
})
