/**
 * The checkout API as a client that speaks only 2026-01-30 or only 2026-04-17 sees it: the
 * examples' create → update → delegate → complete and create → cancel, in that version's wire
 * format (line items, totals, fulfillment details, selected options, protocol, payment handlers).
 * Every 200/201 session response is also checked strictly against the version's schema by
 * `test/support/http.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  cancelRequest,
  clientOf,
  COMPLETE_NOTES,
  completeRequest,
  createRequest,
  exampleBuyer,
  fulfillmentDetails,
  type Json,
  LINE_ITEMS_VERSIONS,
  runApp,
  updateRequest
} from "../../support/acp-fixtures.ts"

/** The fields of the 2025-09-29 format, which no line-items response has. */
const OTHER_FORMAT_FIELDS = ["items", "fulfillment_address", "fulfillment_option_id"]

const lineTotals = (base: number, tax: number) => [
  { type: "items_base_amount", display_text: "Base amount", amount: base },
  { type: "discount", display_text: "Discount", amount: 0 },
  { type: "subtotal", display_text: "Subtotal", amount: base },
  { type: "tax", display_text: "Tax", amount: tax },
  { type: "total", display_text: "Total", amount: base + tax }
]

/** San Francisco, 7.25 %: 2500 → 181 (181.25), 2800 → 203; shipping is not taxed in CA. */
const expectedLines = [
  { item: { id: "tshirt-classic" }, quantity: 1, unit_amount: 2500, totals: lineTotals(2500, 181) },
  { item: { id: "mug-ceramic" }, quantity: 2, unit_amount: 1400, totals: lineTotals(2800, 203) }
]

const sessionTotals = (shipping: number) =>
  [
    ["items_base_amount", 5300],
    ["subtotal", 5300],
    ["fulfillment", shipping],
    ["tax", 384],
    ["total", 5300 + shipping + 384]
  ] as const

const typesAndAmounts = (totals: ReadonlyArray<Json>) => totals.map((total) => [total.type, total.amount])

const withoutIds = (lines: ReadonlyArray<Json>) => lines.map(({ id: _id, ...line }) => line)

const expectLineItemsFormat = (session: Json) => {
  for (const field of OTHER_FORMAT_FIELDS) expect(session).not.toHaveProperty(field)
  for (const line of session.line_items) {
    expect(line.id).toMatch(/^li_/)
    expect(line).not.toHaveProperty("base_amount")
  }
}

describe.each(LINE_ITEMS_VERSIONS)("the checkout flow in %s", (version) => {
  const client = clientOf(version)

  it.effect("create → update → delegate a card → complete: 200 with the order", () =>
    runApp(Effect.gen(function*() {
      const created = yield* client.create(createRequest(version))
      expect(created.status).toBe(201)
      const session = created.body
      expect(session.id).toMatch(/^cs_/)
      expect(session.protocol).toEqual({ version })
      expect(session.status).toBe("not_ready_for_payment")
      expect(session.messages).toEqual([
        expect.objectContaining({ type: "error", code: "missing", param: "$.buyer" })
      ])
      expect(session.currency).toBe("usd")
      // No quantity is 1; a quantity given is kept.
      expect(withoutIds(session.line_items)).toEqual(expectedLines)
      expect(typesAndAmounts(session.totals)).toEqual(sessionTotals(500))
      expect(session.fulfillment_options.map((option: Json) => [option.type, option.id])).toEqual([
        ["shipping", "standard"],
        ["shipping", "express"]
      ])
      // The cheapest option is selected for every item until the agent picks one.
      expect(session.selected_fulfillment_options).toEqual([
        { type: "shipping", option_id: "standard", item_ids: ["tshirt-classic", "mug-ceramic"] }
      ])
      expect(session.fulfillment_details).toEqual(fulfillmentDetails)
      expect(session).not.toHaveProperty("buyer")
      expect(session.capabilities.payment.handlers.map((handler: Json) => handler.id)).toEqual(["card_tokenized"])
      // The agent supports 3ds and biometric; the merchant 3ds and address verification.
      expect(session.capabilities.interventions.supported).toEqual(["3ds"])
      expectLineItemsFormat(session)

      const updated = yield* client.update(session.id, updateRequest(version))
      expect(updated.status).toBe(200)
      expect(updated.body.status).toBe("ready_for_payment")
      expect(updated.body.messages).toEqual([])
      expect(updated.body.selected_fulfillment_options).toEqual([
        { type: "shipping", option_id: "express", item_ids: ["tshirt-classic", "mug-ceramic"] }
      ])
      expect(updated.body.buyer).toEqual(exampleBuyer)
      expect(updated.body.fulfillment_details).toEqual(fulfillmentDetails)
      expect(typesAndAmounts(updated.body.totals)).toEqual(sessionTotals(1500))
      expect(withoutIds(updated.body.line_items)).toEqual(expectedLines)
      expect(updated.body.line_items.map((line: Json) => line.id)).toEqual(
        session.line_items.map((line: Json) => line.id)
      )
      expectLineItemsFormat(updated.body)

      const token = yield* client.delegate(session.id, 7184)
      expect(token).toMatch(/^vt_/)
      const completed = yield* client.complete(session.id, completeRequest(version, token))
      expect(completed.status).toBe(200)
      const paid = completed.body
      expect(paid.status).toBe("completed")
      expect(paid.protocol).toEqual({ version })
      expect(paid.buyer).toEqual(exampleBuyer)
      expect(paid.fulfillment_details).toEqual(fulfillmentDetails)
      expect(paid.selected_fulfillment_options).toEqual(updated.body.selected_fulfillment_options)
      expect(typesAndAmounts(paid.totals)).toEqual(sessionTotals(1500))
      expect(paid.order.id).toMatch(/^ord_/)
      expect(paid.order.checkout_session_id).toBe(session.id)
      expect(typeof paid.order.permalink_url).toBe("string")
      if (version === "2026-04-17") {
        expect(paid.order.type).toBe("order")
        // The notes of the last request that gave any.
        expect(paid.order.confirmation).toEqual({ order_notes: COMPLETE_NOTES })
      } else {
        expect(Object.keys(paid.order).sort()).toEqual(["checkout_session_id", "id", "permalink_url"])
      }
      expectLineItemsFormat(paid)

      const read = yield* client.get(session.id)
      expect(read.status).toBe(200)
      expect(read.body.status).toBe("completed")
      expect(read.body).not.toHaveProperty("order")
      expect(typesAndAmounts(read.body.totals)).toEqual(sessionTotals(1500))

      // A completed session is final.
      const again = yield* client.complete(session.id, completeRequest(version, token))
      expect([again.status, again.body.code]).toEqual([409, "session_completed"])
      const cancel = yield* client.cancel(session.id)
      expect([cancel.status, cancel.body.code]).toEqual([405, "session_completed"])
    })))

  it.effect("create → cancel with an intent trace: 200 canceled, then final", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version))
      const canceled = yield* client.cancel(session.id, cancelRequest)
      expect(canceled.status).toBe(200)
      expect(canceled.body.status).toBe("canceled")
      expect(canceled.body.protocol).toEqual({ version })
      expect(withoutIds(canceled.body.line_items)).toEqual(expectedLines)
      expect(canceled.body.fulfillment_details).toEqual(fulfillmentDetails)
      expectLineItemsFormat(canceled.body)
      expect((yield* client.get(session.id)).body.status).toBe("canceled")

      const again = yield* client.cancel(session.id, cancelRequest)
      expect([again.status, again.body.code]).toEqual([405, "session_canceled"])
      const update = yield* client.update(session.id, updateRequest(version))
      expect([update.status, update.body.code]).toEqual([422, "session_not_modifiable"])
    })))

  it.effect("cancel with no body, with an empty body, with an unknown reason code: 200 canceled", () =>
    runApp(Effect.gen(function*() {
      for (
        const body of [undefined, {}, { intent_trace: { reason_code: "found_it_cheaper_elsewhere" } }]
      ) {
        const session = yield* client.created(createRequest(version))
        const canceled = yield* client.cancel(session.id, body)
        expect([canceled.status, canceled.body.status]).toEqual([200, "canceled"])
      }
    })))

  it.effect("a cancel body that is not the version's intent trace: 400 at its path", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version))
      const bad = yield* client.cancel(session.id, { intent_trace: { trace_summary: "no reason given" } })
      expect(bad.status).toBe(400)
      expect(bad.body.param).toBe("$.intent_trace.reason_code")
      expect((yield* client.get(session.id)).body.status).toBe("not_ready_for_payment")
    })))

  it.effect("capabilities: interventions are what both support; a declared handler the merchant has is kept", () =>
    runApp(Effect.gen(function*() {
      const declared = yield* client.created(createRequest(version, {
        capabilities: {
          interventions: { supported: ["address_verification", "3ds"] },
          payment: { handlers: [{ name: "dev.proto.tokenized.card" }, { name: "dev.acp.seller_backed.saved_card" }] }
        }
      }))
      expect(declared.capabilities.interventions).toEqual({
        supported: ["3ds", "address_verification"],
        required: [],
        enforcement: "conditional"
      })
      expect(declared.capabilities.payment.handlers.map((handler: Json) => handler.name)).toEqual([
        "dev.proto.tokenized.card"
      ])
      // Declaring no interventions: the merchant's as they are.
      const none = yield* client.created(createRequest(version, { capabilities: {} }))
      expect(none.capabilities.interventions.supported).toEqual(["3ds", "address_verification"])
      const nothingShared = yield* client.created(createRequest(version, {
        capabilities: { interventions: { supported: ["biometric"] } }
      }))
      expect(nothingShared.capabilities.interventions.supported).toEqual([])
    })))

  it.effect("an update with line_items replaces the list; quantities default to 1", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version))
      const updated = yield* client.update(session.id, {
        line_items: [{ id: "hoodie-zip", quantity: 3 }, { id: "tshirt-classic" }]
      })
      expect(updated.status).toBe(200)
      expect(updated.body.line_items.map((line: Json) => [line.item.id, line.quantity, line.unit_amount])).toEqual([
        ["hoodie-zip", 3, 5900],
        ["tshirt-classic", 1, 2500]
      ])
      expect(updated.body.selected_fulfillment_options[0].item_ids).toEqual(["hoodie-zip", "tshirt-classic"])
    })))

  it.effect("what is missing is named in the version's paths, on the session and when completing", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version, { fulfillment_details: undefined }))
      expect(session.status).toBe("not_ready_for_payment")
      expect(session.messages.map((message: Json) => [message.type, message.code, message.param])).toEqual([
        ["error", "missing", "$.fulfillment_details.address"],
        ["error", "missing", "$.buyer"]
      ])
      expect(session.fulfillment_options).toEqual([])
      expect(session).not.toHaveProperty("selected_fulfillment_options")
      expect(session).not.toHaveProperty("fulfillment_details")
      const complete = yield* client.complete(session.id, completeRequest(version, "vt_unused"))
      expect([complete.status, complete.body.code, complete.body.param]).toEqual([
        422,
        "session_not_ready",
        "$.fulfillment_details.address"
      ])
      // A digital item needs no address: the digital option is selected.
      const digital = yield* client.created(createRequest(version, {
        line_items: [{ id: "ebook-field-guide" }],
        fulfillment_details: undefined,
        buyer: exampleBuyer
      }))
      expect(digital.status).toBe("ready_for_payment")
      expect(digital.selected_fulfillment_options).toEqual([
        { type: "digital", option_id: "digital", item_ids: ["ebook-field-guide"] }
      ])
    })))

  it.effect("the examples' locale, timezone, metadata and attribution are taken; the first three shown", () =>
    runApp(Effect.gen(function*() {
      const created = yield* client.create(createRequest(version, {
        locale: "en-US",
        timezone: "America/Los_Angeles",
        metadata: { campaign: "q4", source: { channel: "chat" } },
        affiliate_attribution: {
          provider: "impact.com",
          token: "atp_01J8Z3WXYZ9ABC",
          publisher_id: "pub_123",
          touchpoint: "first"
        }
      }))
      expect(created.status).toBe(201)
      expect([created.body.locale, created.body.timezone, created.body.metadata]).toEqual([
        "en-US",
        "America/Los_Angeles",
        { campaign: "q4", source: { channel: "chat" } }
      ])
      expect((yield* client.get(created.body.id)).body.metadata).toEqual(created.body.metadata)
    })))

  it.effect("the price is the merchant's: a unit_amount or name sent with a line item changes nothing", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version, {
        line_items: [{ id: "tshirt-classic", unit_amount: 300, name: "Vintage Denim Jacket" }]
      }))
      expect(session.line_items.map((line: Json) => [line.item, line.unit_amount])).toEqual([
        [{ id: "tshirt-classic" }, 2500]
      ])
    })))
})
