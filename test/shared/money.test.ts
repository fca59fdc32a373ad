import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { multiplyAmount, parseDecimalAmount, roundHalfUp, subtractAmount, sumAmounts } from "../../src/shared/money.ts"
import { MAX_AMOUNT } from "../../src/shared/schema-helpers.ts"

describe("roundHalfUp", () => {
  it("rounds .5 up and below .5 down", () => {
    expect(roundHalfUp(100, 5_000)).toBe(1) // 0.5
    expect(roundHalfUp(99, 5_000)).toBe(0) // 0.495
    expect(roundHalfUp(300, 5_000)).toBe(2) // 1.5
    expect(roundHalfUp(1, 500_000)).toBe(1) // 0.5
    expect(roundHalfUp(1, 499_999)).toBe(0) // 0.499999
    expect(roundHalfUp(5_000, 88_750)).toBe(444) // 443.75
    expect(roundHalfUp(500, 88_750)).toBe(44) // 44.375
    expect(roundHalfUp(1_500, 88_750)).toBe(133) // 133.125
    expect(roundHalfUp(1_999, 50_000)).toBe(100) // 99.95
  })

  it("is exact at zero and at the rate bounds", () => {
    expect(roundHalfUp(0, 1_000_000)).toBe(0)
    expect(roundHalfUp(12_345, 0)).toBe(0)
    expect(roundHalfUp(12_345, 1_000_000)).toBe(12_345)
  })

  it("stays exact for amounts up to MAX_AMOUNT = 10^15 (product beyond 2^53)", () => {
    expect(roundHalfUp(MAX_AMOUNT, 1_000_000)).toBe(MAX_AMOUNT)
    expect(roundHalfUp(MAX_AMOUNT, 999_999)).toBe(999_999_000_000_000)
    expect(roundHalfUp(999_999_999_999, 500_000)).toBe(500_000_000_000) // …999.5 up
    expect(roundHalfUp(999_999_999_999, 88_750)).toBe(88_750_000_000) // 88 749 999 999.91125
    expect(roundHalfUp(999_999_999_999, 999_999)).toBe(999_998_999_999) // …999.000001
    expect(roundHalfUp(999_999_999_997, 1)).toBe(1_000_000) // 999 999.999997
  })

  it("matches the half-up definition for any amount and rate", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_AMOUNT }), fc.integer({ min: 0, max: 1_000_000 }), (amount, ppm) => {
        const r = BigInt(roundHalfUp(amount, ppm))
        const twice = 2n * BigInt(amount) * BigInt(ppm)
        // r - 1/2 <= amount × ppm / 10^6 < r + 1/2
        expect((2n * r - 1n) * 1_000_000n <= twice).toBe(true)
        expect(twice < (2n * r + 1n) * 1_000_000n).toBe(true)
      })
    )
  })

  it("refuses negative or fractional input", () => {
    expect(() => roundHalfUp(-1, 5_000)).toThrow(RangeError)
    expect(() => roundHalfUp(1.5, 5_000)).toThrow(RangeError)
    expect(() => roundHalfUp(1, -5)).toThrow(RangeError)
  })
})

describe("multiplyAmount, sumAmounts, subtractAmount", () => {
  it("compute exactly", () => {
    expect(multiplyAmount(2_500, 4)).toBe(10_000)
    expect(multiplyAmount(MAX_AMOUNT, 9)).toBe(9_000_000_000_000_000)
    expect(() => multiplyAmount(MAX_AMOUNT, 10)).toThrow(RangeError)
    expect(sumAmounts([1, 2, 3])).toBe(6)
    expect(sumAmounts([])).toBe(0)
    expect(subtractAmount(10, 4)).toBe(6)
    expect(subtractAmount(10, 10)).toBe(0)
  })

  it("throw instead of losing precision or going negative", () => {
    expect(() => multiplyAmount(MAX_AMOUNT, 10_000)).toThrow(RangeError)
    expect(() => sumAmounts([Number.MAX_SAFE_INTEGER, 1])).toThrow(RangeError)
    expect(() => sumAmounts([1, -1])).toThrow(RangeError)
    expect(() => subtractAmount(4, 10)).toThrow(RangeError)
  })
})

describe("parseDecimalAmount", () => {
  it("reads major units as digits: exact where floating point is not", () => {
    expect(0.1 + 0.2).not.toBe(0.3)
    expect(parseDecimalAmount("0.1")! + parseDecimalAmount("0.2")!).toBe(parseDecimalAmount("0.3"))
    expect(parseDecimalAmount("0.3")).toBe(30)
    expect(19.99 * 100).not.toBe(1999)
    expect(parseDecimalAmount("19.99")).toBe(1999)
    expect(parseDecimalAmount("1.15")).toBe(115)
    expect(parseDecimalAmount("4.35")).toBe(435)
    expect(parseDecimalAmount("25")).toBe(2500)
    expect(parseDecimalAmount("25.5")).toBe(2550)
    expect(parseDecimalAmount(" 25.00 ")).toBe(2500)
    expect(parseDecimalAmount("0")).toBe(0)
    expect(parseDecimalAmount("007.05")).toBe(705)
    expect(parseDecimalAmount("9999999999.99")).toBe(999_999_999_999)
  })

  it("refuses a third decimal, signs, exponents, separators, blanks and more than ten integer digits", () => {
    for (
      const text of [
        "1.005",
        "1.000",
        "-1",
        "+1",
        "1e3",
        "1E3",
        "0x10",
        "1,50",
        "1 000",
        ".5",
        "5.",
        "",
        " ",
        "Infinity",
        "NaN",
        "12345678901",
        "1.2.3",
        "０",
        "1_000"
      ]
    ) {
      expect(parseDecimalAmount(text), text).toBeUndefined()
    }
  })

  it("reads back every amount written with two decimals", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 999_999_999_999 }), (minor) => {
      const text = `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, "0")}`
      expect(parseDecimalAmount(text)).toBe(minor)
    }))
  })
})
