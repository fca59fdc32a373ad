/**
 * Bad input in the line-items format (2026-01-30, 2026-04-17): each refusal has its status, code
 * and `param` in the version's JSONPath, and leaves the session as it was. What the format
 * defines and this merchant cannot honour (split fulfillment, quotes, tax exemption, purchase
 * orders, an authentication result without the details its outcome needs) is refused, never dropped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  cardPayment,
  type Client,
  clientOf,
  completeRequest,
  createRequest,
  exampleBuyer,
  fulfillmentDetails,
  type Json,
  LINE_ITEMS_VERSIONS,
  runApp,
  shipTo,
  updateRequest
} from "../../support/acp-fixtures.ts"
import type { TestResponse } from "../../support/http.ts"

const refusal = (response: TestResponse) => ({
  status: response.status,
  type: response.body?.type,
  code: response.body?.code,
  param: response.body?.param
})

const badRequest = (param: string, code = "invalid") => ({ status: 400, type: "invalid_request", code, param })

/** A session ready for payment (express shipping, the examples' buyer). */
const readySession = (client: Client) =>
  Effect.gen(function*() {
    const created = yield* client.created(createRequest(client.version))
    const updated = yield* client.update(created.id, updateRequest(client.version))
    expect(updated.body.status).toBe("ready_for_payment")
    return updated.body as Json
  })

/** `change` is refused and the session reads back exactly as before. */
const expectUnchanged = (client: Client, before: Json) =>
  Effect.map(client.get(before.id), (after) => expect(after.body).toEqual(before))

describe.each(LINE_ITEMS_VERSIONS)("refusals in %s", (version) => {
  const client = clientOf(version)

  describe("create", () => {
    it.effect("without currency, capabilities or line items: 400 missing at the field", () =>
      runApp(Effect.gen(function*() {
        for (const field of ["currency", "capabilities", "line_items"]) {
          const response = yield* client.create(createRequest(version, { [field]: undefined }))
          expect(refusal(response)).toEqual(badRequest(`$.${field}`, "missing"))
        }
      })))

    it.effect("a currency other than the merchant's: 400 at $.currency", () =>
      runApp(Effect.gen(function*() {
        expect(refusal(yield* client.create(createRequest(version, { currency: "eur" })))).toEqual(
          badRequest("$.currency")
        )
        // The merchant's currency in capitals is the merchant's currency.
        expect((yield* client.create(createRequest(version, { currency: "USD" }))).status).toBe(201)
      })))

    it.effect("an unknown product: 400 at $.line_items[i].id", () =>
      runApp(Effect.gen(function*() {
        const response = yield* client.create(createRequest(version, {
          line_items: [{ id: "tshirt-classic" }, { id: "item_123" }]
        }))
        expect(refusal(response)).toEqual(badRequest("$.line_items[1].id"))
      })))

    it.effect("quantities that are not whole units of at least 1: 400 at the quantity", () =>
      runApp(Effect.gen(function*() {
        for (const quantity of [0, -1, 1.5, "2"]) {
          const response = yield* client.create(createRequest(version, {
            line_items: [{ id: "tshirt-classic", quantity }]
          }))
          expect(refusal(response)).toEqual(badRequest("$.line_items[0].quantity"))
        }
        const empty = yield* client.create(createRequest(version, { line_items: [] }))
        expect(refusal(empty)).toEqual(badRequest("$.line_items"))
      })))

    it.effect("more than the stock: 422 out_of_stock at the line item", () =>
      runApp(Effect.gen(function*() {
        const response = yield* client.create(createRequest(version, {
          line_items: [{ id: "tshirt-classic" }, { id: "print-limited", quantity: 4 }]
        }))
        expect(refusal(response)).toEqual({
          status: 422,
          type: "invalid_request",
          code: "out_of_stock",
          param: "$.line_items[1]"
        })
      })))

    it.effect("declared payment handlers the merchant does not offer: 400 at $.capabilities.payment.handlers", () =>
      runApp(Effect.gen(function*() {
        const response = yield* client.create(createRequest(version, {
          capabilities: { payment: { handlers: [{ name: "dev.acp.seller_backed.saved_card" }] } }
        }))
        expect(refusal(response)).toEqual(badRequest("$.capabilities.payment.handlers", "unsupported"))
      })))

    it.effect("split fulfillment, a quote, a tax exemption: 400 unsupported at the field", () =>
      runApp(Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [Json, string]> = [
          [{ fulfillment_groups: [{ id: "group_1", item_ids: ["tshirt-classic"] }] }, "$.fulfillment_groups"],
          [{ quote_id: "quote_123" }, "$.quote_id"],
          [{
            buyer: {
              ...exampleBuyer,
              tax_exemption: { certificate_id: "cert_1", certificate_type: "resale" }
            }
          }, "$.buyer.tax_exemption"]
        ]
        for (const [fields, param] of cases) {
          expect(refusal(yield* client.create(createRequest(version, fields)))).toEqual(
            badRequest(param, "unsupported")
          )
        }
      })))
  })

  describe("update", () => {
    it.effect("an option that is not offered: 400 at $.selected_fulfillment_options[0].option_id", () =>
      runApp(Effect.gen(function*() {
        const session = yield* readySession(client)
        const response = yield* client.update(session.id, {
          selected_fulfillment_options: [
            { type: "shipping", option_id: "international", item_ids: ["tshirt-classic", "mug-ceramic"] }
          ]
        })
        expect(refusal(response)).toEqual(badRequest("$.selected_fulfillment_options[0].option_id"))
        yield* expectUnchanged(client, session)
      })))

    it.effect("two selections with different options (split fulfillment): 400 at the second", () =>
      runApp(Effect.gen(function*() {
        const session = yield* readySession(client)
        const response = yield* client.update(session.id, {
          selected_fulfillment_options: [
            { type: "shipping", option_id: "standard", item_ids: ["tshirt-classic"] },
            { type: "shipping", option_id: "express", item_ids: ["mug-ceramic"] }
          ]
        })
        expect(refusal(response)).toEqual(badRequest("$.selected_fulfillment_options[1]", "unsupported"))
        yield* expectUnchanged(client, session)
        // Two selections of the same option are one option for the whole order.
        const same = yield* client.update(session.id, {
          selected_fulfillment_options: [
            { type: "shipping", option_id: "standard", item_ids: ["tshirt-classic"] },
            { type: "shipping", option_id: "standard", item_ids: ["mug-ceramic"] }
          ]
        })
        expect(same.status).toBe(200)
        expect(same.body.selected_fulfillment_options).toEqual([
          { type: "shipping", option_id: "standard", item_ids: ["tshirt-classic", "mug-ceramic"] }
        ])
      })))

    it.effect("a selection of the wrong type or for items not in the session: 400", () =>
      runApp(Effect.gen(function*() {
        const session = yield* readySession(client)
        const wrongType = yield* client.update(session.id, {
          selected_fulfillment_options: [
            { type: "digital", option_id: "standard", item_ids: ["tshirt-classic", "mug-ceramic"] }
          ]
        })
        expect(refusal(wrongType)).toEqual(badRequest("$.selected_fulfillment_options[0].type"))
        const unknownItem = yield* client.update(session.id, {
          selected_fulfillment_options: [{ type: "shipping", option_id: "standard", item_ids: ["item_123"] }]
        })
        expect(refusal(unknownItem)).toEqual(badRequest("$.selected_fulfillment_options"))
        yield* expectUnchanged(client, session)
      })))

    it.effect("fulfillment_groups, a tax exemption, an unknown product: 400 at the field", () =>
      runApp(Effect.gen(function*() {
        const session = yield* readySession(client)
        const groups = yield* client.update(session.id, { fulfillment_groups: [] })
        expect(refusal(groups)).toEqual(badRequest("$.fulfillment_groups", "unsupported"))
        const exemption = yield* client.update(session.id, {
          buyer: { ...exampleBuyer, tax_exemption: { certificate_id: "cert_1", certificate_type: "government" } }
        })
        expect(refusal(exemption)).toEqual(badRequest("$.buyer.tax_exemption", "unsupported"))
        const product = yield* client.update(session.id, { line_items: [{ id: "item_456" }] })
        expect(refusal(product)).toEqual(badRequest("$.line_items[0].id"))
        yield* expectUnchanged(client, session)
      })))
  })

  describe("complete", () => {
    /** `body` is refused before any payment: the session stays ready and the token stays usable. */
    const refusedThenPaid = (body: (token: string) => Json, expected: ReturnType<typeof refusal>) =>
      runApp(Effect.gen(function*() {
        const session = yield* readySession(client)
        const token = yield* client.delegate(session.id, 7184)
        expect(refusal(yield* client.complete(session.id, body(token)))).toEqual(expected)
        yield* expectUnchanged(client, session)
        const paid = yield* client.complete(session.id, completeRequest(version, token))
        expect([paid.status, paid.body.status]).toEqual([200, "completed"])
      }))

    it.effect("a purchase order number: 400 at $.payment_data.purchase_order_number", () =>
      refusedThenPaid(
        (token) =>
          completeRequest(version, token, { payment_data: { ...cardPayment(token), purchase_order_number: "PO-1" } }),
        badRequest("$.payment_data.purchase_order_number", "unsupported")
      ))

    it.effect("payment terms: 400 at $.payment_data.payment_terms", () =>
      refusedThenPaid(
        (token) =>
          completeRequest(version, token, { payment_data: { ...cardPayment(token), payment_terms: "net_30" } }),
        badRequest("$.payment_data.payment_terms", "unsupported")
      ))

    it.effect("the 2025-09-29 payment data {token, provider}: 400", () =>
      refusedThenPaid(
        (token) => completeRequest(version, token, { payment_data: { token, provider: "stripe" } }),
        badRequest("$.payment_data.handler_id", "missing")
      ))

    it.effect("a handler without an instrument: 400 at $.payment_data.instrument", () =>
      refusedThenPaid(
        (token) => completeRequest(version, token, { payment_data: { handler_id: cardPayment(token).handler_id } }),
        badRequest("$.payment_data.instrument", "missing")
      ))

    it.effect("a handler the merchant does not have: 400 at $.payment_data.handler_id", () =>
      refusedThenPaid(
        (token) =>
          completeRequest(version, token, { payment_data: { ...cardPayment(token), handler_id: "seller_pm_123" } }),
        badRequest("$.payment_data.handler_id")
      ))

    it.effect("an authenticated result without its details: 400 at $.authentication_result.outcome_details", () =>
      refusedThenPaid(
        (token) => completeRequest(version, token, { authentication_result: { outcome: "authenticated" } }),
        badRequest("$.authentication_result.outcome_details", "missing")
      ))

    it.effect("an outcome outside the protocol's list: 400 at $.authentication_result.outcome", () =>
      refusedThenPaid(
        (token) => completeRequest(version, token, { authentication_result: { outcome: "succeeded" } }),
        badRequest("$.authentication_result.outcome")
      ))

    it.effect("a buyer with a tax exemption: 400 at $.buyer.tax_exemption", () =>
      refusedThenPaid(
        (token) =>
          completeRequest(version, token, {
            buyer: { ...exampleBuyer, tax_exemption: { certificate_id: "c", certificate_type: "resale" } }
          }),
        badRequest("$.buyer.tax_exemption", "unsupported")
      ))
  })
})

describe("refusals only 2026-04-17 has", () => {
  const client = clientOf("2026-04-17")

  it.effect("complete with fulfillment details whose address is not the session's: 409, not paid", () =>
    runApp(Effect.gen(function*() {
      const session = yield* readySession(client)
      const token = yield* client.delegate(session.id, 7184)
      const moved = { ...fulfillmentDetails, address: { ...shipTo, line_one: "1 Infinite Loop", postal_code: "95014" } }
      const response = yield* client.complete(
        session.id,
        completeRequest("2026-04-17", token, {
          fulfillment_details: moved
        })
      )
      expect(refusal(response)).toEqual({
        status: 409,
        type: "invalid_request",
        code: "fulfillment_address_changed",
        param: "$.fulfillment_details.address"
      })
      yield* expectUnchanged(client, session)
      // The same address (and a new contact) pays.
      const paid = yield* client.complete(
        session.id,
        completeRequest("2026-04-17", token, {
          fulfillment_details: { ...fulfillmentDetails, phone_number: "15550001111" }
        })
      )
      expect([paid.status, paid.body.status]).toEqual([200, "completed"])
      expect(paid.body.fulfillment_details).toEqual({ ...fulfillmentDetails, phone_number: "15550001111" })
    })))

  it.effect("order notes longer than 5000 characters: 400 at $.order_notes", () =>
    runApp(Effect.gen(function*() {
      const response = yield* client.create(createRequest("2026-04-17", { order_notes: "x".repeat(5001) }))
      expect(refusal(response)).toEqual(badRequest("$.order_notes"))
    })))
})
