/** Property: the totals invariants over random catalogs, carts, addresses and rates. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { CatalogSnapshot, TaxRule } from "../../src/catalog/model/catalog.ts"
import {
  computeTotals,
  fulfillmentOptions,
  priceLineItems,
  resolveTaxRule
} from "../../src/checkout/pricing/pricing.ts"
import { address, demoCatalog, NOW } from "../support/fixtures.ts"

const rateString = (ppm: number): string => ppm === 1_000_000 ? "1" : `0.${String(ppm).padStart(6, "0")}`

const arbProduct = (id: string) =>
  fc.record({
    id: fc.constant(id),
    title: fc.constant(id),
    unit_amount: fc.integer({ min: 0, max: 10_000_000 }),
    kind: fc.constantFrom("physical" as const, "digital" as const),
    tax_category: fc.constantFrom("apparel", "ebook", "food"),
    stock: fc.constant(1_000_000)
  })

const arbRule = (country: string, region: string | undefined) =>
  fc
    .record({
      rate: fc.integer({ min: 0, max: 1_000_000 }).map(rateString),
      categoryRate: fc.option(fc.integer({ min: 0, max: 1_000_000 }).map(rateString), { nil: undefined }),
      shipping_taxable: fc.boolean()
    })
    .map(({ categoryRate, rate, shipping_taxable }): TaxRule => ({
      country,
      ...(region === undefined ? {} : { region }),
      rate,
      ...(categoryRate === undefined ? {} : { category_rates: { food: categoryRate } }),
      shipping_taxable
    }))

const arbScenario = fc
  .record({
    products: fc.tuple(arbProduct("p0"), arbProduct("p1"), arbProduct("p2"), arbProduct("p3")),
    rules: fc.tuple(arbRule("US", undefined), arbRule("US", "NY"), arbRule("GB", undefined)),
    amounts: fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 })),
    cart: fc.array(
      fc.record({ index: fc.integer({ min: 0, max: 3 }), quantity: fc.integer({ min: 1, max: 10_000 }) }),
      {
        maxLength: 20
      }
    ),
    address: fc.option(
      fc.record({ country: fc.constantFrom("US", "us", "GB", "JP"), state: fc.constantFrom("NY", "ny", "TX", "") }),
      { nil: undefined }
    ),
    choice: fc.nat(),
    discountSeed: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 })
  })
  .map((s) => {
    const catalog: CatalogSnapshot = {
      ...demoCatalog,
      products: new Map(s.products.map((p) => [p.id, p])),
      taxRules: s.rules,
      shippingMethods: [
        { ...demoCatalog.shippingMethods[0]!, amount: s.amounts[0] },
        { ...demoCatalog.shippingMethods[2]!, amount: s.amounts[1] }
      ]
    }
    return { ...s, catalog }
  })

const isAmount = (n: number) => Number.isSafeInteger(n) && n >= 0

describe("totals invariants (property)", () => {
  it("hold for any cart, address, rates and discounts", () => {
    fc.assert(
      fc.property(arbScenario, (s) => {
        const products = s.cart.map((c) => s.products[c.index]!)
        const addr = s.address === undefined ? undefined : { ...address(s.address.country, s.address.state || "X") }
        const rule = resolveTaxRule(s.catalog.taxRules, addr)
        const lines = priceLineItems(
          s.cart.map((c, i) => ({
            id: `li_${i}`,
            item: { id: products[i]!.id, quantity: c.quantity },
            product: products[i]!
          })),
          rule,
          s.cart.map((c, i) => Math.floor((s.discountSeed[i] ?? 0) * products[i]!.unit_amount * c.quantity))
        )
        const options = fulfillmentOptions({ catalog: s.catalog, products, address: addr, rule, now: NOW })
        const selected = options.length === 0 ? undefined : options[s.choice % options.length]
        const totals = computeTotals(lines, selected)
        const amount = (type: string) => totals.find((t) => t.type === type)?.amount

        for (const l of lines) {
          for (const n of [l.base_amount, l.discount, l.subtotal, l.tax, l.total]) expect(isAmount(n)).toBe(true)
          expect(l.subtotal).toBe(l.base_amount - l.discount)
          expect(l.total).toBe(l.subtotal + l.tax)
        }
        for (const t of totals) expect(isAmount(t.amount)).toBe(true)
        for (const o of options) {
          expect(o.total).toBe(o.subtotal + o.tax)
          for (const n of [o.subtotal, o.tax, o.total]) expect(isAmount(n)).toBe(true)
        }

        const sum = (ns: ReadonlyArray<number>) => ns.reduce((a, b) => a + b, 0)
        expect(amount("items_base_amount")).toBe(sum(lines.map((l) => l.base_amount)))
        expect(amount("subtotal")).toBe(sum(lines.map((l) => l.subtotal)))
        expect(amount("tax")).toBe(sum(lines.map((l) => l.tax)) + (selected?.tax ?? 0))
        expect(amount("fulfillment")).toBe(selected?.subtotal)
        expect(amount("total")).toBe(amount("subtotal")! + (selected?.subtotal ?? 0) + amount("tax")!)
        const discount = sum(lines.map((l) => l.discount))
        expect(amount("items_discount")).toBe(discount === 0 ? undefined : discount)
        const order = ["items_base_amount", "items_discount", "subtotal", "fulfillment", "tax", "total"]
        const types = totals.map((t) => t.type)
        expect([...types].sort((a, b) => order.indexOf(a) - order.indexOf(b))).toEqual(types)

        // fulfillment shape
        const allDigital = products.length > 0 && products.every((p) => p.kind === "digital")
        if (allDigital) expect(options.map((o) => o.type)).toEqual(["digital"])
        else if (addr === undefined || products.length === 0) expect(options).toEqual([])
        else expect(options.every((o) => o.type === "shipping")).toBe(true)
        // tax 0 until an address is known
        if (addr === undefined) expect(amount("tax")).toBe(0)
      }),
      { numRuns: 500 }
    )
  })
})
