import { describe, expect, it } from "@effect/vitest"
import { containsCardNumber, luhnValid, maskCardNumbers } from "../../src/shared/card-numbers.ts"

describe("card numbers in text", () => {
  it("finds card numbers as they are written: together, or grouped by single spaces or dashes", () => {
    for (
      const text of [
        "4242424242424242",
        "pan 4242424242424242.",
        "4242 4242 4242 4242",
        "5555-5555-5555-4444",
        "3782 822463 10005", // American Express, 15 digits
        "4242 4242 4242 4242 12/30", // followed by more digits after a space
        "id=4000002760003184&x=1"
      ]
    ) expect(containsCardNumber(text), text).toBe(true)
  })

  it("leaves alone what is not one: a failed Luhn check, other lengths, longer runs, other first digits", () => {
    for (
      const text of [
        "4242424242424241", // Luhn
        "424242424242", // 12 digits
        "42424242424242424242", // 20 digits
        "0004242424242424242", // one run of 19 starting with 0
        "1764412800000", // epoch milliseconds, 13 digits from 1
        "7992739871300", // first digit 7 (petroleum), Luhn-valid
        "4242  4242 4242 4242", // a double space splits it into runs too short
        "2026-11-29T09:19:08.123Z",
        "req_3f9a2c"
      ]
    ) expect(containsCardNumber(text), text).toBe(false)
  })

  it("masks each card number to its first 6 and last 4 digits, keeping the text around it", () => {
    expect(maskCardNumbers("No order 4242424242424242.")).toBe("No order 424242******4242.")
    expect(maskCardNumbers("a 4242 4242 4242 4242 b 378282246310005 c")).toBe("a 424242******4242 b 378282*****0005 c")
    expect(maskCardNumbers("4242 4242 4242 4242 12/30")).toBe("424242******4242 12/30")
    expect(maskCardNumbers("at 2026-11-29 order 1764412800000")).toBe("at 2026-11-29 order 1764412800000")
  })

  it("the Luhn check", () => {
    expect(luhnValid("4242424242424242")).toBe(true)
    expect(luhnValid("4242424242424241")).toBe(false)
    expect(luhnValid("42424242x4242424")).toBe(false)
  })
})
