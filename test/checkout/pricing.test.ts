import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Product, TaxRule } from "../../src/catalog/model/catalog.ts"
import { type Address, type FulfillmentOption } from "../../src/catalog/model/fulfillment.ts"
import { type LineItem } from "../../src/catalog/model/line-items.ts"
import {
  addBusinessDays,
  cheapestOption,
  computeTotals,
  fulfillmentOptions,
  priceLineItem,
  priceLineItems,
  productTaxRatePpm,
  resolveTaxRule,
  shippingTaxRatePpm,
  shipsTo
} from "../../src/checkout/pricing/pricing.ts"
import { address, CA, demoCatalog, GB, JP, NOW, NY, TX } from "../support/fixtures.ts"

const product = (id: string): Product => {
  const found = demoCatalog.products.get(id)
  if (found === undefined) throw new Error(`no product ${id}`)
  return found
}
const rules = demoCatalog.taxRules

describe("resolveTaxRule", () => {
  it("prefers the region rule, matched case-insensitively", () => {
    expect(resolveTaxRule(rules, NY)?.rate).toBe("0.08875")
    expect(resolveTaxRule(rules, address("us", "ny"))?.rate).toBe("0.08875")
    expect(resolveTaxRule(rules, address("US", " Ca "))?.rate).toBe("0.0725")
  })

  it("falls back to the country rule", () => {
    expect(resolveTaxRule(rules, TX)).toMatchObject({ country: "US", rate: "0.05" })
    expect(resolveTaxRule(rules, TX)?.region).toBeUndefined()
    expect(resolveTaxRule(rules, GB)?.rate).toBe("0.2")
    expect(resolveTaxRule(rules, address("gb", "Anywhere"))?.rate).toBe("0.2")
  })

  it("finds nothing without an address or a rule for the country", () => {
    expect(resolveTaxRule(rules, undefined)).toBeUndefined()
    expect(resolveTaxRule(rules, JP)).toBeUndefined()
    // a region rule alone does not cover the rest of its country
    const regionOnly: ReadonlyArray<TaxRule> = [{ country: "CA", region: "QC", rate: "0.1", shipping_taxable: true }]
    expect(resolveTaxRule(regionOnly, address("CA", "ON"))).toBeUndefined()
    expect(resolveTaxRule(regionOnly, address("CA", "qc"))?.rate).toBe("0.1")
  })

  it("gives category overrides and shipping rates", () => {
    const california = resolveTaxRule(rules, CA)
    expect(productTaxRatePpm(california, product("ebook-field-guide"))).toBe(0)
    expect(productTaxRatePpm(california, product("tshirt-classic"))).toBe(72_500)
    expect(productTaxRatePpm(resolveTaxRule(rules, TX), product("ebook-field-guide"))).toBe(50_000)
    expect(productTaxRatePpm(undefined, product("tshirt-classic"))).toBe(0)
    expect(shippingTaxRatePpm(california)).toBe(0)
    expect(shippingTaxRatePpm(resolveTaxRule(rules, NY))).toBe(88_750)
    expect(shippingTaxRatePpm(undefined)).toBe(0)
  })
})

describe("line items", () => {
  it("prices base, tax half-up and total", () => {
    const line = priceLineItem(
      { id: "li_1", item: { id: "tshirt-classic", quantity: 2 }, product: product("tshirt-classic") },
      resolveTaxRule(rules, NY)
    )
    expect(line).toEqual({
      id: "li_1",
      item: { id: "tshirt-classic", quantity: 2 },
      base_amount: 5000,
      discount: 0,
      subtotal: 5000,
      tax: 444,
      total: 5444
    })
  })

  it("has no tax before an address is known", () => {
    const line = priceLineItem(
      { id: "x", item: { id: "mug-ceramic", quantity: 3 }, product: product("mug-ceramic") },
      undefined
    )
    expect(line).toMatchObject({ base_amount: 4200, tax: 0, total: 4200 })
  })

  it("applies per-line discounts before tax (missing entries are 0)", () => {
    const lines = priceLineItems(
      [
        { id: "a", item: { id: "tshirt-classic", quantity: 1 }, product: product("tshirt-classic") },
        { id: "b", item: { id: "mug-ceramic", quantity: 1 }, product: product("mug-ceramic") }
      ],
      resolveTaxRule(rules, TX),
      [500]
    )
    expect(lines[0]).toMatchObject({ base_amount: 2500, discount: 500, subtotal: 2000, tax: 100, total: 2100 })
    expect(lines[1]).toMatchObject({ base_amount: 1400, discount: 0, subtotal: 1400, tax: 70, total: 1470 })
    expect(() =>
      priceLineItems(
        [{ id: "a", item: { id: "mug-ceramic", quantity: 1 }, product: product("mug-ceramic") }],
        undefined,
        [1401]
      )
    ).toThrow(RangeError)
  })
})

describe("addBusinessDays", () => {
  const friday = Date.parse("2026-01-30T12:00:00.000Z")
  const at = (ms: number) => new Date(ms).toISOString()

  it("skips weekends from a Friday", () => {
    expect(at(addBusinessDays(friday, 0))).toBe("2026-01-30T12:00:00.000Z")
    expect(at(addBusinessDays(friday, 1))).toBe("2026-02-02T12:00:00.000Z") // Monday
    expect(at(addBusinessDays(friday, 3))).toBe("2026-02-04T12:00:00.000Z")
    expect(at(addBusinessDays(friday, 5))).toBe("2026-02-06T12:00:00.000Z") // next Friday
    expect(at(addBusinessDays(friday, 6))).toBe("2026-02-09T12:00:00.000Z")
    expect(at(addBusinessDays(friday, 14))).toBe("2026-02-19T12:00:00.000Z")
  })

  it("starts counting from a weekend day", () => {
    const saturday = Date.parse("2026-01-31T08:00:00.000Z")
    const sunday = Date.parse("2026-02-01T23:59:00.000Z")
    expect(at(addBusinessDays(saturday, 1))).toBe("2026-02-02T08:00:00.000Z")
    expect(at(addBusinessDays(sunday, 1))).toBe("2026-02-02T23:59:00.000Z")
    expect(at(addBusinessDays(sunday, 2))).toBe("2026-02-03T23:59:00.000Z")
  })

  it("never lands on a weekend and moves forward 7 calendar days per 5 business days", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1, max: 60 }), (start, days) => {
        const end = addBusinessDays(start, days)
        expect([0, 6]).not.toContain(new Date(end).getUTCDay())
        expect(end - start).toBeGreaterThanOrEqual(days * 86_400_000)
        expect(end - start).toBeLessThanOrEqual((Math.ceil(days / 5) * 7 + 2) * 86_400_000)
        expect((end - start) % 86_400_000).toBe(0)
      })
    )
  })
})

describe("fulfillmentOptions", () => {
  const physical = [product("tshirt-classic")]
  const digital = [product("ebook-field-guide"), product("gift-card-50")]
  const options = (products: ReadonlyArray<Product>, addr: Address | undefined) =>
    fulfillmentOptions({ catalog: demoCatalog, products, address: addr, rule: resolveTaxRule(rules, addr), now: NOW })

  it("offers the US methods with shipping tax in NY and delivery windows from a Friday", () => {
    expect(options(physical, NY)).toEqual([
      {
        type: "shipping",
        id: "standard",
        title: "Standard shipping",
        subtitle: "3-5 business days",
        carrier: "USPS",
        earliest_delivery_time: "2026-02-04T12:00:00.000Z",
        latest_delivery_time: "2026-02-06T12:00:00.000Z",
        subtotal: 500,
        tax: 44,
        total: 544
      },
      {
        type: "shipping",
        id: "express",
        title: "Express shipping",
        subtitle: "1-2 business days",
        carrier: "UPS",
        earliest_delivery_time: "2026-02-02T12:00:00.000Z",
        latest_delivery_time: "2026-02-03T12:00:00.000Z",
        subtotal: 1500,
        tax: 133,
        total: 1633
      }
    ])
  })

  it("does not tax shipping where the rule says so", () => {
    expect(options(physical, CA).map((o) => [o.id, o.tax, o.total])).toEqual([
      ["standard", 0, 500],
      ["express", 0, 1500]
    ])
  })

  it("offers international shipping by country, compared upper-cased", () => {
    const gb = options(physical, address("gb", "London"))
    expect(gb.map((o) => [o.id, o.subtotal, o.tax, o.total])).toEqual([["international", 2500, 500, 3000]])
    expect(gb[0]).toMatchObject({
      earliest_delivery_time: "2026-02-10T12:00:00.000Z",
      latest_delivery_time: "2026-02-19T12:00:00.000Z"
    })
    expect(options(physical, address("DE", "Berlin")).map((o) => o.id)).toEqual(["international"])
  })

  it("offers nothing for an unserved country, without an address, or for an empty cart", () => {
    expect(options(physical, JP)).toEqual([])
    expect(options(physical, undefined)).toEqual([])
    expect(options([], NY)).toEqual([])
    expect(shipsTo(demoCatalog, "jp")).toBe(false)
    expect(shipsTo(demoCatalog, "fr")).toBe(true)
  })

  it("offers exactly the digital option when every item is digital, address or not", () => {
    const expected = [
      {
        type: "digital",
        id: "digital",
        title: "Digital delivery",
        subtitle: "Delivered by email",
        subtotal: 0,
        tax: 0,
        total: 0
      }
    ]
    expect(options(digital, undefined)).toEqual(expected)
    expect(options(digital, NY)).toEqual(expected)
    expect(options(digital, JP)).toEqual(expected)
  })

  it("ships mixed carts", () => {
    expect(options([...digital, ...physical], TX).map((o) => o.id)).toEqual(["standard", "express"])
  })

  it("picks the cheapest by total, the first of equals", () => {
    const opts = options(physical, NY)
    expect(cheapestOption(opts)?.id).toBe("standard")
    expect(cheapestOption([])).toBeUndefined()
    const tie = opts.map((o) => ({ ...o, total: 7 }))
    expect(cheapestOption(tie)?.id).toBe("standard")
    expect(cheapestOption([...opts].reverse())?.id).toBe("standard")
  })
})

describe("computeTotals", () => {
  const line = (base: number, discount: number, tax: number): LineItem => ({
    id: "li",
    item: { id: "p", quantity: 1 },
    base_amount: base,
    discount,
    subtotal: base - discount,
    tax,
    total: base - discount + tax
  })
  const shipping: FulfillmentOption = {
    type: "shipping",
    id: "standard",
    title: "Standard",
    subtitle: "",
    carrier: "USPS",
    earliest_delivery_time: "",
    latest_delivery_time: "",
    subtotal: 500,
    tax: 44,
    total: 544
  }

  it("lists the totals in contract order with display texts", () => {
    expect(computeTotals([line(5000, 0, 444)], shipping)).toEqual([
      { type: "items_base_amount", display_text: "Items", amount: 5000 },
      { type: "subtotal", display_text: "Subtotal", amount: 5000 },
      { type: "fulfillment", display_text: "Shipping", amount: 500 },
      { type: "tax", display_text: "Tax", amount: 488 },
      { type: "total", display_text: "Total", amount: 5988 }
    ])
  })

  it("shows a discount only when non-zero and fulfillment only when selected", () => {
    expect(computeTotals([line(3000, 500, 10), line(1000, 0, 5)], undefined)).toEqual([
      { type: "items_base_amount", display_text: "Items", amount: 4000 },
      { type: "items_discount", display_text: "Discount", amount: 500 },
      { type: "subtotal", display_text: "Subtotal", amount: 3500 },
      { type: "tax", display_text: "Tax", amount: 15 },
      { type: "total", display_text: "Total", amount: 3515 }
    ])
  })

  it("calls digital fulfillment Delivery and totals an empty cart to zero", () => {
    const digital: FulfillmentOption = {
      type: "digital",
      id: "d",
      title: "D",
      subtitle: "",
      subtotal: 0,
      tax: 0,
      total: 0
    }
    expect(computeTotals([line(1999, 0, 0)], digital)[2]).toEqual({
      type: "fulfillment",
      display_text: "Delivery",
      amount: 0
    })
    expect(computeTotals([], undefined).map((t) => [t.type, t.amount])).toEqual([
      ["items_base_amount", 0],
      ["subtotal", 0],
      ["tax", 0],
      ["total", 0]
    ])
  })
})
