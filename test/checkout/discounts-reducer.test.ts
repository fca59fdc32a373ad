/**
 * The discount extension in the session reducer: line discounts, totals, messages, capabilities,
 * the completion check; a property over random carts and codes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import type { CatalogSnapshot } from "../../src/catalog/model/catalog.ts"
import { reduce } from "../../src/checkout/session/reducer.ts"
import { type Session, SessionCommand } from "../../src/checkout/session/session.ts"
import { buyer, context, demoCatalog, NY } from "../support/fixtures.ts"
import { amountOf, create } from "./discounts-fixtures.ts"

describe("the reducer with discounts", () => {
  const items = [{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }]

  it("prices lines with their discount, taxes the discounted subtotal and reports items_discount", () => {
    const session = create({ items, buyer, fulfillment_address: NY, discounts: { codes: ["welcome10"] } })
    // bases 5000 and 1400; 10 % = 640 → 500 and 140
    expect(session.line_items.map((l) => [l.base_amount, l.discount, l.subtotal, l.tax])).toEqual([
      [5000, 500, 4500, 399], // 4500 × 8.875 % = 399.375
      [1400, 140, 1260, 112] // 1260 × 8.875 % = 111.825
    ])
    expect(session.totals.map((t) => t.type)).toEqual([
      "items_base_amount",
      "items_discount",
      "subtotal",
      "fulfillment",
      "tax",
      "total"
    ])
    expect(amountOf(session, "items_discount")).toBe(640)
    expect(amountOf(session, "subtotal")).toBe(5760)
    expect(amountOf(session, "total")).toBe(5760 + 500 + 399 + 112 + 44)
    expect(session.discounts).toMatchObject({ codes: ["welcome10"], rejected: [] })
    expect(session.discounts?.applied[0]).toMatchObject({
      id: "dsc_coupon_welcome10",
      code: "WELCOME10",
      amount: 640,
      automatic: false
    })
    expect(session.status).toBe("ready_for_payment")
  })

  it("adds an info message per rejected code and stays ready", () => {
    const session = create({
      items,
      buyer,
      fulfillment_address: NY,
      discounts: { codes: ["WELCOME10", "BOGUS", "SUMMER25"] }
    })
    expect(session.status).toBe("ready_for_payment")
    expect(session.messages).toEqual([
      {
        type: "info",
        param: "$.discounts.codes[1]",
        content_type: "plain",
        content: "Code BOGUS is not a valid discount code."
      },
      { type: "info", param: "$.discounts.codes[2]", content_type: "plain", content: "Code SUMMER25 has expired." }
    ])
    expect(session.discounts?.rejected.map((r) => r.reason)).toEqual(["discount_code_invalid", "discount_code_expired"])
  })

  it("replaces codes on update, keeps them when absent, clears them with []", () => {
    const ctx = context()
    const session = create({ items, buyer, fulfillment_address: NY, discounts: { codes: ["WELCOME10"] } }, ctx)
    const update = (s: Session, request: object) =>
      Either.getOrThrow(reduce(s, SessionCommand.Update({ request }), ctx)).session
    const kept = update(session, { items: [{ id: "hoodie-zip", quantity: 1 }] })
    expect(kept.discounts?.applied.map((a) => [a.code, a.amount])).toEqual([["WELCOME10", 590]])
    const replaced = update(kept, { discounts: { codes: ["FIVEOFF"] } })
    expect(replaced.discounts?.applied.map((a) => [a.code, a.amount])).toEqual([["FIVEOFF", 500]])
    const cleared = update(replaced, { discounts: { codes: [] } })
    expect(cleared.discounts).toEqual({ codes: [], applied: [], rejected: [] })
    expect(cleared.line_items[0]!.discount).toBe(0)
    expect(cleared.totals.some((t) => t.type === "items_discount")).toBe(false)
  })

  it("declares the discount extension only when the catalog has coupons", () => {
    expect(create({ items }).capabilities.extensions).toEqual([{
      name: "dev.proto.discount",
      extends: [
        "$.CheckoutSessionCreateRequest.discounts",
        "$.CheckoutSessionUpdateRequest.discounts",
        "$.CheckoutSession.discounts"
      ],
      schema: expect.stringMatching(/^https:/),
      spec: expect.stringMatching(/^https:/)
    }])
    const none: CatalogSnapshot = { ...demoCatalog, coupons: [] }
    const session = create({ items }, context({ catalog: none }))
    expect(session.capabilities.extensions).toBeUndefined()
    expect(session.discounts).toBeUndefined()
    expect(create({ items, discounts: { codes: ["X"] } }, context({ catalog: none })).discounts?.rejected)
      .toEqual([expect.objectContaining({ code: "X", reason: "discount_code_invalid" })])
  })

  it("refuses to complete when an applied discount reached its limit, re-priced without it", () => {
    const session = create({ items, buyer, fulfillment_address: NY, discounts: { codes: ["WELCOME10"] } })
    const full = context({ redemptions: new Map([["coupon_welcome10", 1000]]) })
    const result = reduce(session, SessionCommand.PrepareCompletion({ buyer: undefined }), full)
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.getLeft(result).pipe((o) => o._tag === "Some" ? o.value : undefined)
    expect(error).toMatchObject({
      _tag: "DiscountUnavailable",
      rejected: { index: 0, reason: "discount_code_usage_limit_reached" }
    })
    if (error?._tag !== "DiscountUnavailable") throw new Error("unexpected")
    expect(amountOf(error.session, "total")!).toBeGreaterThan(amountOf(session, "total")!)
    expect(error.session.discounts?.applied).toEqual([])
    // with room left it completes at the total shown
    const ok = Either.getOrThrow(
      reduce(
        session,
        SessionCommand.PrepareCompletion({ buyer: undefined }),
        context({ redemptions: new Map([["coupon_welcome10", 999]]) })
      )
    )
    expect(amountOf(ok.session, "total")).toBe(amountOf(session, "total"))
  })

  it("keeps every totals invariant for random carts and codes (property)", () => {
    const products = [...demoCatalog.products.keys()]
    const codes = ["WELCOME10", "FIVEOFF", "SUMMER25", "LAUNCH50", "welcome10", "nope"]
    const plenty = context({ available: new Map(products.map((id) => [id, 1_000_000])) })
    fc.assert(
      fc.property(
        fc.array(fc.record({ p: fc.constantFrom(...products), q: fc.integer({ min: 1, max: 3 }) }), {
          minLength: 1,
          maxLength: 6
        }),
        fc.subarray(codes),
        fc.boolean(),
        (lines, chosen, withAddress) => {
          const session = create({
            items: lines.map(({ p, q }) => ({ id: p, quantity: q })),
            buyer,
            ...(withAddress ? { fulfillment_address: NY } : {}),
            discounts: { codes: chosen }
          }, plenty)
          const sum = (f: (l: Session["line_items"][number]) => number) =>
            session.line_items.reduce((a, l) => a + f(l), 0)
          for (const line of session.line_items) {
            expect(line.discount).toBeGreaterThanOrEqual(0)
            expect(line.discount).toBeLessThanOrEqual(line.base_amount)
            expect(line.subtotal).toBe(line.base_amount - line.discount)
            expect(line.total).toBe(line.subtotal + line.tax)
          }
          const applied = session.discounts!.applied.reduce((a, d) => a + d.amount, 0)
          expect(sum((l) => l.discount)).toBe(applied)
          expect(amountOf(session, "items_discount") ?? 0).toBe(applied)
          expect(amountOf(session, "subtotal")).toBe(sum((l) => l.subtotal))
          const fulfillment = amountOf(session, "fulfillment") ?? 0
          const selected = session.fulfillment_options.find((o) => o.id === session.fulfillment_option_id)
          expect(amountOf(session, "tax")).toBe(sum((l) => l.tax) + (selected?.tax ?? 0))
          expect(amountOf(session, "total")).toBe(
            amountOf(session, "subtotal")! + fulfillment + amountOf(session, "tax")!
          )
          expect(session.discounts!.applied.length + session.discounts!.rejected.length).toBe(chosen.length)
          expect(session.messages.filter((m) => m.type === "info")).toHaveLength(session.discounts!.rejected.length)
        }
      ),
      { numRuns: 200 }
    )
  })
})
