/**
 * The discount extension's pure parts: coupon validation, evaluation (stacking, rejections,
 * allocation), with a property over random carts and coupon sets; their use by the session reducer
 * is in `discounts-reducer.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { validateCoupons } from "../../src/catalog/model/coupons.ts"
import { allocateProportionally, evaluateDiscounts } from "../../src/checkout/pricing/discounts.ts"
import { NOW } from "../support/fixtures.ts"
import { amount, percent } from "./discounts-fixtures.ts"

describe("allocateProportionally", () => {
  it("sums exactly, never exceeds a weight, ties go to the lower index", () => {
    expect(allocateProportionally(1, [5, 5])).toEqual([1, 0])
    expect(allocateProportionally(2, [1, 1, 1])).toEqual([1, 1, 0])
    expect(allocateProportionally(10, [0, 3, 7])).toEqual([0, 3, 7])
    expect(allocateProportionally(0, [3, 4])).toEqual([0, 0])
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 20 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (weights, fraction) => {
          const total = weights.reduce((a, b) => a + b, 0)
          const amount = Math.floor(total * fraction)
          const shares = allocateProportionally(amount, weights)
          expect(shares.reduce((a, b) => a + b, 0)).toBe(total === 0 ? 0 : amount)
          shares.forEach((share, i) => {
            expect(share).toBeGreaterThanOrEqual(0)
            expect(share).toBeLessThanOrEqual(weights[i]!)
          })
          expect(allocateProportionally(amount, weights)).toEqual(shares)
        }
      )
    )
  })
})

describe("evaluateDiscounts", () => {
  const coupons = [
    percent("WELCOME10", 10),
    amount("FIVEOFF", 500, { minimum_subtotal: 3000 }),
    percent("OLD", 20, { end: "2026-01-01T00:00:00Z" }),
    percent("SOON", 20, { start: "2026-02-01T00:00:00Z" }),
    percent("LIMITED", 30, { max_redemptions: 5, times_redeemed: 5 }),
    amount("TENOFF", 1000)
  ]
  const evaluate = (
    codes: ReadonlyArray<string>,
    lineBases: ReadonlyArray<number>,
    redemptions?: ReadonlyMap<string, number>
  ) => evaluateDiscounts({ coupons, codes, lineBases, now: NOW, redemptions })

  it("applies percent first, then amount on what is left, allocated across lines", () => {
    const result = evaluate(["fiveoff", " welcome10 "], [2500, 1000])
    expect(result.rejected).toEqual([])
    expect(result.applied.map((a) => [a.code, a.amount, a.priority, a.method])).toEqual([
      ["WELCOME10", 350, 1, "across"],
      ["FIVEOFF", 500, 2, "across"]
    ])
    expect(result.applied[0]!.allocations).toEqual([
      { path: "$.line_items[0]", amount: 250 },
      { path: "$.line_items[1]", amount: 100 }
    ])
    // 500 over what is left (2250, 900): 357.14… and 142.85… → 357 + 143 (largest remainder)
    expect(result.applied[1]!.allocations).toEqual([
      { path: "$.line_items[0]", amount: 357 },
      { path: "$.line_items[1]", amount: 143 }
    ])
    expect(result.lineDiscounts).toEqual([607, 243])
    expect(result.applied[0]!.coupon).toEqual({
      id: "c_welcome10",
      name: "WELCOME10",
      percent_off: 10,
      duration: "once"
    })
  })

  it("gives each rejection reason", () => {
    const result = evaluate(["nope", "OLD", "SOON", "LIMITED", "FIVEOFF", "welcome10", "WELCOME10", "TENOFF"], [2000])
    expect(result.rejected.map((r) => [r.index, r.code, r.reason])).toEqual([
      [0, "nope", "discount_code_invalid"],
      [1, "OLD", "discount_code_expired"],
      [2, "SOON", "discount_code_invalid"],
      [3, "LIMITED", "discount_code_usage_limit_reached"],
      [4, "FIVEOFF", "discount_code_minimum_not_met"],
      [6, "WELCOME10", "discount_code_already_applied"]
    ])
    expect(result.applied.map((a) => a.code)).toEqual(["WELCOME10", "TENOFF"])
    expect(result.rejected.every((r) => r.message.length > 0)).toBe(true)
  })

  it("allows one coupon of each kind", () => {
    const result = evaluate(["TENOFF", "FIVEOFF"], [5000])
    expect(result.applied.map((a) => a.code)).toEqual(["TENOFF"])
    expect(result.rejected).toEqual([
      expect.objectContaining({ code: "FIVEOFF", reason: "discount_code_already_applied" })
    ])
  })

  it("expires at end (exclusive) and starts at start (inclusive) by the clock", () => {
    const at = (now: number, code: string) =>
      evaluateDiscounts({ coupons, codes: [code], lineBases: [1000], now }).applied.length
    const end = Date.parse("2026-01-01T00:00:00Z")
    expect(at(end - 1, "OLD")).toBe(1)
    expect(at(end, "OLD")).toBe(0)
    const start = Date.parse("2026-02-01T00:00:00Z")
    expect(at(start - 1, "SOON")).toBe(0)
    expect(at(start, "SOON")).toBe(1)
  })

  it("counts redemptions from the database over the catalog's initial count", () => {
    expect(evaluate(["LIMITED"], [1000], new Map([["c_limited", 4]])).applied).toHaveLength(1)
    expect(evaluate(["WELCOME10"], [1000], new Map([["c_welcome10", 1_000_000]])).applied).toHaveLength(1)
  })

  it("applies automatic coupons without a code, in the kinds the codes left free", () => {
    const auto = [...coupons, percent("AUTO5", 5, { automatic: true }), amount("AUTO1", 100, { automatic: true })]
    const none = evaluateDiscounts({ coupons: auto, codes: [], lineBases: [1000], now: NOW })
    expect(none.applied.map((a) => [a.code, a.automatic, a.amount])).toEqual([["AUTO5", true, 50], [
      "AUTO1",
      true,
      100
    ]])
    const withCode = evaluateDiscounts({ coupons: auto, codes: ["WELCOME10"], lineBases: [1000], now: NOW })
    expect(withCode.applied.map((a) => [a.code, a.automatic])).toEqual([["WELCOME10", false], ["AUTO1", true]])
  })

  it("never takes more than the items are worth", () => {
    const result = evaluateDiscounts({
      coupons: [percent("ALL", 100), amount("BIG", 10_000)],
      codes: ["BIG", "ALL"],
      lineBases: [700, 300],
      now: NOW
    })
    expect(result.applied.map((a) => a.amount)).toEqual([1000, 0])
    expect(result.applied[1]!.allocations).toEqual([])
    expect(result.lineDiscounts).toEqual([700, 300])
  })

  it("keeps every invariant over random carts and coupon sets (property)", () => {
    const coupon = fc.oneof(
      fc.record({
        p: fc.integer({ min: 1, max: 1_000_000 }),
        min: fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined })
      })
        .map(({ min, p }) => ({ kind: "percent" as const, value: p / 10_000, min })),
      fc.record({
        a: fc.integer({ min: 1, max: 100_000 }),
        min: fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined })
      })
        .map(({ a, min }) => ({ kind: "amount" as const, value: a, min }))
    )
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2_000_000 }), { minLength: 1, maxLength: 12 }),
        fc.array(coupon, { minLength: 0, maxLength: 6 }),
        fc.array(fc.nat({ max: 8 }), { maxLength: 10 }),
        (lineBases, specs, picks) => {
          const catalogCoupons = specs.map((spec, i) =>
            spec.kind === "percent"
              ? percent(`P${i}`, spec.value, spec.min === undefined ? {} : { minimum_subtotal: spec.min })
              : amount(`A${i}`, spec.value, spec.min === undefined ? {} : { minimum_subtotal: spec.min })
          )
          const codes = picks.map((n) => catalogCoupons[n]?.code.toLowerCase() ?? `BOGUS${n}`)
          const result = evaluateDiscounts({ coupons: catalogCoupons, codes, lineBases, now: NOW })
          const itemsBase = lineBases.reduce((a, b) => a + b, 0)
          // every code is answered exactly once
          expect(result.applied.length + result.rejected.length).toBe(codes.length)
          // at most one of each kind; percent before amount
          const kinds = result.applied.map((a) => (a.coupon.percent_off !== undefined ? "percent" : "amount"))
          expect(new Set(kinds).size).toBe(kinds.length)
          if (kinds.length === 2) expect(kinds).toEqual(["percent", "amount"])
          const perLine = lineBases.map(() => 0)
          for (const applied of result.applied) {
            expect(applied.allocations.reduce((sum, a) => sum + a.amount, 0)).toBe(applied.amount)
            for (const allocation of applied.allocations) {
              const index = Number(/^\$\.line_items\[(\d+)\]$/.exec(allocation.path)![1])
              expect(allocation.amount).toBeGreaterThan(0)
              perLine[index]! += allocation.amount
            }
          }
          expect(result.lineDiscounts).toEqual(perLine)
          result.lineDiscounts.forEach((d, i) => {
            expect(d).toBeGreaterThanOrEqual(0)
            expect(d).toBeLessThanOrEqual(lineBases[i]!)
          })
          for (const rejected of result.rejected) {
            if (rejected.reason === "discount_code_minimum_not_met") {
              const c = catalogCoupons.find((x) => x.code.toLowerCase() === rejected.code)!
              expect(itemsBase).toBeLessThan(c.minimum_subtotal!)
            }
          }
          expect(result.lineDiscounts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(itemsBase)
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("validateCoupons", () => {
  it("reports every cross-field problem with its path", () => {
    const errors = validateCoupons([
      percent("A", 10),
      { ...percent("a", 10), id: "c_other" },
      { id: "c_both", name: "both", code: "BOTH", percent_off: 5, amount_off: 5, currency: "usd" },
      { id: "c_none", name: "none", code: "NONE" },
      amount("EUR", 100, { currency: "eur" }),
      percent("BACKWARDS", 10, { start: "2026-02-01T00:00:00Z", end: "2026-01-01T00:00:00Z" }),
      { ...percent("DUP", 1), id: "c_a" }
    ], "usd")
    expect(errors).toEqual([
      expect.stringMatching(/^\$\.coupons\[1\]\.code: duplicate coupon code/),
      expect.stringMatching(/^\$\.coupons\[2\]: exactly one of percent_off and amount_off/),
      expect.stringMatching(/^\$\.coupons\[3\]: exactly one of percent_off and amount_off/),
      expect.stringMatching(/^\$\.coupons\[4\]\.currency/),
      expect.stringMatching(/^\$\.coupons\[5\]\.end: must be after start/),
      expect.stringMatching(/^\$\.coupons\[6\]\.id: duplicate coupon id/)
    ])
    expect(validateCoupons([percent("OK", 12.5), amount("OK2", 1)], "usd")).toEqual([])
  })
})
