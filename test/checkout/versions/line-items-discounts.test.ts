/**
 * The discount extension in the line-items format, adapted from the official discount-extension
 * examples to the demo catalog's coupons: codes on create and update (and the deprecated
 * `coupons`), applied discounts allocated to `$.line_items[i]`, rejected codes with a warning at
 * `$.discounts.codes[i]`, the line items' and the session's totals.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  amountOf,
  clientOf,
  createRequest,
  type Json,
  LINE_ITEMS_VERSIONS,
  runApp
} from "../../support/acp-fixtures.ts"

/** Two shirts and a hoodie (5000 + 5900), as the percentage example has two lines. */
const lines = [{ id: "tshirt-classic", quantity: 2 }, { id: "hoodie-zip", quantity: 1 }]

describe.each(LINE_ITEMS_VERSIONS)("discounts in %s", (version) => {
  const client = clientOf(version)

  it.effect("a percentage code is allocated to the line items and shown in their totals", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version, {
        line_items: lines,
        discounts: { codes: ["welcome10"] }
      }))
      expect(session.discounts.codes).toEqual(["welcome10"])
      expect(session.discounts.rejected).toEqual([])
      expect(session.discounts.applied).toHaveLength(1)
      const applied = session.discounts.applied[0]
      expect(applied).toMatchObject({ code: "WELCOME10", amount: 1090, coupon: { id: "coupon_welcome10" } })
      expect(applied.allocations).toEqual([
        { path: "$.line_items[0]", amount: 500 },
        { path: "$.line_items[1]", amount: 590 }
      ])
      expect(
        session.line_items.map((line: Json) => [amountOf(line.totals, "discount"), amountOf(line.totals, "subtotal")])
      )
        .toEqual([[500, 4500], [590, 5310]])
      expect(amountOf(session.totals, "items_base_amount")).toBe(10900)
      expect(amountOf(session.totals, "items_discount")).toBe(1090)
      expect(amountOf(session.totals, "subtotal")).toBe(9810)
      expect(session.capabilities.extensions.map((extension: Json) => extension.name)).toEqual(["dev.proto.discount"])
    })))

  it.effect("a rejected code: kept in codes, rejected with its reason, a warning at its path", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version, {
        line_items: lines,
        discounts: { codes: ["FIVEOFF", "SUMMER25"] }
      }))
      expect(session.discounts.codes).toEqual(["FIVEOFF", "SUMMER25"])
      expect(session.discounts.applied.map((applied: Json) => [applied.code, applied.amount])).toEqual([
        ["FIVEOFF", 500]
      ])
      expect(session.discounts.rejected).toEqual([
        { code: "SUMMER25", reason: "discount_code_expired", message: "Code SUMMER25 has expired." }
      ])
      // A warning with the rejection's reason, as the discount extension has it; no other note.
      expect(session.messages.filter((message: Json) => message.param !== "$.buyer")).toEqual([
        {
          type: "warning",
          code: "discount_code_expired",
          param: "$.discounts.codes[1]",
          content_type: "plain",
          content: "Code SUMMER25 has expired."
        }
      ])
    })))

  it.effect("update replaces the codes; [] clears them; the deprecated coupons field is read too", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version, { line_items: lines }))
      expect(session.discounts.applied).toEqual([])
      const withCoupon = yield* client.update(session.id, { coupons: ["WELCOME10"] })
      expect(withCoupon.status).toBe(200)
      expect(withCoupon.body.discounts.applied.map((applied: Json) => applied.code)).toEqual(["WELCOME10"])
      const cleared = yield* client.update(session.id, { discounts: { codes: [] } })
      expect(cleared.body.discounts).toEqual({ codes: [], applied: [], rejected: [] })
      expect(amountOf(cleared.body.totals, "subtotal")).toBe(10900)
    })))

  it.effect("an agent that declares other extensions only gets no discount extension", () =>
    runApp(Effect.gen(function*() {
      const session = yield* client.created(createRequest(version, {
        capabilities: { extensions: ["dev.acp.other"] }
      }))
      expect(session.capabilities).not.toHaveProperty("extensions")
      const named = yield* client.created(createRequest(version, { capabilities: { extensions: ["discount"] } }))
      expect(named.capabilities.extensions.map((extension: Json) => extension.name)).toEqual(["dev.proto.discount"])
    })))
})
