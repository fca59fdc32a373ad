/**
 * Delegate payment semantic validation, after the schema: what it derives (brand, last4, funding
 * type, expiry) and its 422s — Luhn, iin and last4 against the number, card expiry and allowance
 * expiry (UTC, offsets honoured), currency, country and a blocked risk signal.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseTimestamp } from "../../src/delegate-payment/model/delegate-payment.ts"
import {
  decodeDelegatePaymentRequest,
  parseDelegatePayment,
  validateDelegatePayment
} from "../../src/delegate-payment/model/validation.ts"
import { luhnValid } from "../../src/shared/card-numbers.ts"
import { noCardData, NOW, semanticFailure, validRequest, with_ } from "./delegate-payment-fixtures.ts"

describe("delegate payment semantic validation", () => {
  it("accepts a valid request and derives brand, last4, funding type and expiry", () => {
    const result = parseDelegatePayment(validRequest(), NOW)
    if (Either.isLeft(result)) throw new Error(result.left.error.message)
    expect(result.right.brand).toBe("visa")
    expect(result.right.last4).toBe("4242")
    expect(result.right.fundingType).toBe("credit")
    expect(result.right.expiresAtMillis).toBe(Date.parse("2026-01-30T13:00:00Z"))
  })

  it("detects the brand when display_brand and display_last4 are absent", () => {
    const result = parseDelegatePayment(
      with_((r) => {
        r.payment_method.number = "378282246310005"
        delete r.payment_method.display_brand
        delete r.payment_method.display_last4
        delete r.payment_method.iin
      }),
      NOW
    )
    if (Either.isLeft(result)) throw new Error(result.left.error.message)
    expect(result.right.brand).toBe("amex")
    expect(result.right.last4).toBe("0005")
  })

  it("supports the documented test cards", () => {
    for (
      const number of [
        "4242424242424242",
        "4000000000000002",
        "4000000000009995",
        "5555555555554444",
        "378282246310005"
      ]
    ) {
      const input = with_((r) => {
        r.payment_method.number = number
        delete r.payment_method.iin
        delete r.payment_method.display_last4
        delete r.payment_method.display_brand
      })
      expect(Either.isRight(parseDelegatePayment(input, NOW))).toBe(true)
    }
  })

  const expect422 = (input: unknown, param: string, now = NOW) => {
    const failure = semanticFailure(input, now)
    expect(failure.status).toBe(422)
    expect(failure.error).toMatchObject({ type: "invalid_request", code: "invalid_card", param })
    noCardData(failure.error.message)
    return failure
  }

  it("Luhn: rejects an fpan failing the check", () => {
    const bad = "4242424242424241"
    const failure = expect422(with_((r) => (r.payment_method.number = bad)), "$.payment_method.number")
    noCardData(failure.error.message, bad)
  })

  it("Luhn: not applied to network tokens", () => {
    const input = with_((r) => {
      r.payment_method.card_number_type = "network_token"
      r.payment_method.number = "4242424242424241"
    })
    expect(Either.isRight(parseDelegatePayment(input, NOW))).toBe(true)
  })

  it("luhnValid", () => {
    expect(luhnValid("4242424242424242")).toBe(true)
    expect(luhnValid("5555555555554444")).toBe(true)
    expect(luhnValid("378282246310005")).toBe(true)
    expect(luhnValid("4000000000000002")).toBe(true)
    expect(luhnValid("4000000000009995")).toBe(true)
    expect(luhnValid("4242424242424243")).toBe(false)
    expect(luhnValid("79927398713")).toBe(true)
    expect(luhnValid("79927398710")).toBe(false)
    expect(luhnValid("42a2")).toBe(false)
  })

  it("rejects an iin that is not the start of the fpan", () => {
    expect422(with_((r) => (r.payment_method.iin = "555555")), "$.payment_method.iin")
  })

  it("rejects a display_last4 that is not the end of the fpan", () => {
    expect422(with_((r) => (r.payment_method.display_last4 = "1111")), "$.payment_method.display_last4")
  })

  it("does not compare iin/last4 with a network token", () => {
    const input = with_((r) => {
      r.payment_method.card_number_type = "network_token"
      r.payment_method.number = "4895370012345678"
    })
    expect(Either.isRight(parseDelegatePayment(input, NOW))).toBe(true)
  })

  describe("card expiry", () => {
    const card = (month: string, year: string) =>
      with_((r) => {
        r.payment_method.exp_month = month
        r.payment_method.exp_year = year
        r.allowance.expires_at = "2030-01-01T00:00:00Z"
      })

    it("a card expiring this month is valid through its last second", () => {
      expect(Either.isRight(parseDelegatePayment(card("12", "2026"), Date.parse("2026-12-31T23:59:59Z")))).toBe(true)
      expect(Either.isRight(parseDelegatePayment(card("12", "2026"), Date.parse("2026-12-31T23:59:59.999Z")))).toBe(
        true
      )
    })

    it("is expired from the first instant of the next month (year rolls over → exp_year)", () => {
      expect422(card("12", "2026"), "$.payment_method.exp_year", Date.parse("2027-01-01T00:00:00Z"))
    })

    it("only the month is past → still exp_year (CONTRACT §7)", () => {
      expect422(card("05", "2026"), "$.payment_method.exp_year", Date.parse("2026-06-01T00:00:00Z"))
      expect(Either.isRight(parseDelegatePayment(card("06", "2026"), Date.parse("2026-06-30T23:59:59Z")))).toBe(true)
    })

    it("a past year alone is expired; a future year without month is fine", () => {
      const yearOnly = (year: string) =>
        with_((r) => {
          delete r.payment_method.exp_month
          r.payment_method.exp_year = year
        })
      expect422(yearOnly("2025"), "$.payment_method.exp_year")
      expect(Either.isRight(parseDelegatePayment(yearOnly("2026"), NOW))).toBe(true)
    })

    it("uses UTC, not local time", () => {
      // 2026-07-01T00:30 UTC is still June in America; the card ending 06/2026 is expired in UTC.
      expect422(card("06", "2026"), "$.payment_method.exp_year", Date.parse("2026-07-01T00:30:00Z"))
    })
  })

  describe("allowance expiry", () => {
    const at = (expiresAt: string) => with_((r) => (r.allowance.expires_at = expiresAt))

    it("expires_at equal to now is invalid", () => {
      expect422(at("2026-01-30T12:00:00.000Z"), "$.allowance.expires_at")
    })

    it("expires_at in the past is invalid", () => {
      expect422(at("2026-01-30T11:59:59Z"), "$.allowance.expires_at")
    })

    it("now + 1 ms is valid", () => {
      expect(Either.isRight(parseDelegatePayment(at("2026-01-30T12:00:00.001Z"), NOW))).toBe(true)
    })

    it("honours offsets", () => {
      // 13:00+02:00 is 11:00Z: past
      expect422(at("2026-01-30T13:00:00+02:00"), "$.allowance.expires_at")
      // 07:30-05:00 is 12:30Z: future
      expect(Either.isRight(parseDelegatePayment(at("2026-01-30T07:30:00-05:00"), NOW))).toBe(true)
    })

    it("an unparsable value handed directly to validation is a 400", () => {
      const decoded = decodeDelegatePaymentRequest(validRequest())
      if (Either.isLeft(decoded)) throw new Error("expected success")
      const request = { ...decoded.right, allowance: { ...decoded.right.allowance, expires_at: "soon" } }
      const result = validateDelegatePayment(request, NOW)
      if (Either.isRight(result)) throw new Error("expected failure")
      expect(result.left.status).toBe(400)
      expect(result.left.error.param).toBe("$.allowance.expires_at")
    })
  })

  it("parseTimestamp", () => {
    expect(parseTimestamp("2026-01-30T12:00:00Z")).toBe(NOW)
    expect(parseTimestamp("2026-01-30T12:00:00.5Z")).toBe(NOW + 500)
    expect(parseTimestamp("2026-01-30t12:00:00.123456789z")).toBe(NOW + 123)
    expect(parseTimestamp("2026-01-30T14:00:00+02:00")).toBe(NOW)
    expect(parseTimestamp("2024-02-29T00:00:00Z")).toBe(Date.parse("2024-02-29T00:00:00Z"))
    for (
      const bad of [
        "2025-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-01-30T24:00:00Z",
        "2026-01-30",
        "2026-01-30T12:00Z",
        "x"
      ]
    ) {
      expect(parseTimestamp(bad)).toBeUndefined()
    }
  })

  it("rejects an unknown currency", () => {
    expect422(with_((r) => (r.allowance.currency = "abc")), "$.allowance.currency")
  })

  it("accepts known currencies", () => {
    for (const currency of ["usd", "eur", "jpy", "gbp"]) {
      expect(Either.isRight(parseDelegatePayment(with_((r) => (r.allowance.currency = currency)), NOW))).toBe(true)
    }
  })

  it("rejects an unassigned country and accepts assigned ones (either case)", () => {
    expect422(with_((r) => (r.billing_address.country = "ZZ")), "$.billing_address.country")
    expect422(with_((r) => (r.billing_address.country = "XK")), "$.billing_address.country")
    for (const country of ["US", "DE", "fr"]) {
      expect(Either.isRight(parseDelegatePayment(with_((r) => (r.billing_address.country = country)), NOW))).toBe(true)
    }
  })

  it("rejects a blocked risk signal with its index", () => {
    const failure = expect422(
      with_((r) => {
        r.risk_signals = [
          { type: "card_testing", score: 1, action: "authorized" },
          { type: "card_testing", score: 5, action: "manual_review" },
          { type: "card_testing", score: 99, action: "blocked" }
        ]
      }),
      "$.risk_signals[2]"
    )
    expect(failure.error.message).toContain("blocked")
  })
})
