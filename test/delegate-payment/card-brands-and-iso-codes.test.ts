/**
 * The codes a delegate payment is checked against: card brands detected from the number, lowercase
 * ISO 4217 currencies and uppercase ISO 3166-1 alpha-2 countries.
 */
import { describe, expect, it } from "@effect/vitest"
import { detectCardBrand } from "../../src/delegate-payment/model/card-number.ts"
import { isCountry, isCurrency, ISO_3166_COUNTRIES } from "../../src/shared/iso-codes.ts"

describe("card brand detection", () => {
  it.each([
    ["4242424242424242", "visa"],
    ["4000000000000002", "visa"],
    ["5555555555554444", "mastercard"],
    ["2223003122003222", "mastercard"],
    ["2720990000000007", "mastercard"],
    ["378282246310005", "amex"],
    ["371449635398431", "amex"],
    ["6011111111111117", "discover"],
    ["6445644564456445", "discover"],
    ["6500000000000002", "discover"],
    ["6221260000000000", "discover"],
    ["3056930009020004", "unknown"],
    ["2220990000000000", "unknown"],
    ["1234567890123", "unknown"]
  ])("%s → %s", (number, brand) => {
    expect(detectCardBrand(number)).toBe(brand)
  })
})

describe("ISO codes", () => {
  it("currencies are lowercase ISO 4217", () => {
    expect(isCurrency("usd")).toBe(true)
    expect(isCurrency("eur")).toBe(true)
    expect(isCurrency("USD")).toBe(false)
    expect(isCurrency("abc")).toBe(false)
  })
  it("countries are the 249 uppercase alpha-2 codes", () => {
    expect(ISO_3166_COUNTRIES.size).toBe(249)
    expect(isCountry("US")).toBe(true)
    expect(isCountry("GB")).toBe(true)
    expect(isCountry("us")).toBe(false)
    expect(isCountry("UK")).toBe(false)
  })
})
