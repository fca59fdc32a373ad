import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { detectCardBrand, luhnValid } from "../../src/delegate/card-number.ts"
import {
  DelegateError,
  DelegatePaymentRequest,
  DelegatePaymentResponse,
  parseTimestamp
} from "../../src/delegate/delegate-payment.ts"
import {
  decodeDelegatePaymentRequest,
  delegateErrorFromParseError,
  parseDelegatePayment,
  validateDelegatePayment
} from "../../src/delegate/delegate-validation.ts"
import { isCountry, isCurrency, ISO_3166_COUNTRIES } from "../../src/shared/iso-codes.ts"

const NUMBER = "4242424242424242"
const CVC = "737"
const NOW = Date.parse("2026-01-30T12:00:00.000Z")

const validRequest = (): Record<string, any> => ({
  payment_method: {
    type: "card",
    card_number_type: "fpan",
    number: NUMBER,
    exp_month: "12",
    exp_year: "2027",
    name: "Jane Doe",
    cvc: CVC,
    checks_performed: ["avs", "cvv"],
    iin: "424242",
    display_card_funding_type: "credit",
    display_brand: "visa",
    display_last4: "4242",
    metadata: { issuing_bank: "test" },
    virtual: false
  },
  allowance: {
    reason: "one_time",
    max_amount: 2000,
    currency: "usd",
    checkout_session_id: "cs_123",
    merchant_id: "merchant_1",
    expires_at: "2026-01-30T13:00:00Z"
  },
  billing_address: {
    name: "Jane Doe",
    line_one: "1 Main St",
    city: "Springfield",
    state: "IL",
    country: "US",
    postal_code: "62701"
  },
  risk_signals: [{ type: "card_testing", score: 10, action: "authorized" }],
  metadata: { source: "agent" }
})

const with_ = (mutate: (r: Record<string, any>) => void): Record<string, any> => {
  const r = validRequest()
  mutate(r)
  return r
}

const decodeFailure = (input: unknown) => {
  const result = decodeDelegatePaymentRequest(input)
  if (Either.isRight(result)) throw new Error("expected a decode failure")
  return result.left
}

const semanticFailure = (input: unknown, now = NOW) => {
  const result = parseDelegatePayment(input, now)
  if (Either.isRight(result)) throw new Error("expected a validation failure")
  return result.left
}

const noCardData = (message: string, ...secrets: ReadonlyArray<string>) => {
  for (const secret of [NUMBER, CVC, ...secrets]) expect(message).not.toContain(secret)
}

describe("delegate payment request schema", () => {
  it("accepts a valid request and ignores unknown fields", () => {
    const input = with_((r) => {
      r.extra = { anything: true }
      r.payment_method.future_field = 1
    })
    const result = decodeDelegatePaymentRequest(input)
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) {
      expect(result.right).not.toHaveProperty("extra")
      expect(result.right.payment_method).not.toHaveProperty("future_field")
    }
  })

  it("accepts the minimal request (optional fields absent)", () => {
    const input = {
      payment_method: {
        type: "card",
        card_number_type: "network_token",
        number: "4895370012345678",
        display_card_funding_type: "debit",
        metadata: {}
      },
      allowance: validRequest().allowance,
      risk_signals: [{ type: "card_testing", score: 0, action: "manual_review" }],
      metadata: {}
    }
    expect(Either.isRight(parseDelegatePayment(input, NOW))).toBe(true)
  })

  const cases: ReadonlyArray<readonly [string, (r: Record<string, any>) => void, string, string]> = [
    ["payment_method missing", (r) => delete r.payment_method, "$.payment_method", "payment_method is required"],
    ["allowance missing", (r) => delete r.allowance, "$.allowance", "allowance is required"],
    ["risk_signals missing", (r) => delete r.risk_signals, "$.risk_signals", "risk_signals is required"],
    ["metadata missing", (r) => delete r.metadata, "$.metadata", "metadata is required"],
    ["metadata not an object", (r) => (r.metadata = "x"), "$.metadata", "metadata must be an object"],
    ["metadata value not a string", (r) => (r.metadata = { a: 1 }), "$.metadata.a", "metadata.a must be a string"],
    ["type not card", (r) => (r.payment_method.type = "bank"), "$.payment_method.type", "must be \"card\""],
    [
      "card_number_type unknown",
      (r) => (r.payment_method.card_number_type = "dpan"),
      "$.payment_method.card_number_type",
      "must be one of \"fpan\", \"network_token\""
    ],
    [
      "number missing",
      (r) => delete r.payment_method.number,
      "$.payment_method.number",
      "payment_method.number is required"
    ],
    [
      "number with spaces",
      (r) => (r.payment_method.number = "4242 4242 4242 4242"),
      "$.payment_method.number",
      "12 to 19 digits"
    ],
    [
      "number too short",
      (r) => (r.payment_method.number = "42424242424"),
      "$.payment_method.number",
      "12 to 19 digits"
    ],
    [
      "number too long",
      (r) => (r.payment_method.number = "42424242424242424242"),
      "$.payment_method.number",
      "12 to 19 digits"
    ],
    [
      "number not a string",
      (r) => (r.payment_method.number = 4242424242424242),
      "$.payment_method.number",
      "must be a string"
    ],
    ["exp_month 13", (r) => (r.payment_method.exp_month = "13"), "$.payment_method.exp_month", "01 to 12"],
    ["exp_month one digit", (r) => (r.payment_method.exp_month = "1"), "$.payment_method.exp_month", "01 to 12"],
    ["exp_month 00", (r) => (r.payment_method.exp_month = "00"), "$.payment_method.exp_month", "01 to 12"],
    ["exp_year two digits", (r) => (r.payment_method.exp_year = "27"), "$.payment_method.exp_year", "four digits"],
    ["cvc too short", (r) => (r.payment_method.cvc = "12"), "$.payment_method.cvc", "3 or 4 digits"],
    ["cvc too long", (r) => (r.payment_method.cvc = "12345"), "$.payment_method.cvc", "3 or 4 digits"],
    ["cvc letters", (r) => (r.payment_method.cvc = "12a"), "$.payment_method.cvc", "3 or 4 digits"],
    ["iin 5 digits", (r) => (r.payment_method.iin = "42424"), "$.payment_method.iin", "first 6 digits"],
    ["iin 8 digits", (r) => (r.payment_method.iin = "42424242"), "$.payment_method.iin", "first 6 digits"],
    [
      "funding type unknown",
      (r) => (r.payment_method.display_card_funding_type = "charge"),
      "$.payment_method.display_card_funding_type",
      "must be one of \"credit\", \"debit\", \"prepaid\""
    ],
    [
      "funding type missing",
      (r) => delete r.payment_method.display_card_funding_type,
      "$.payment_method.display_card_funding_type",
      "is required"
    ],
    [
      "display_last4 3 digits",
      (r) => (r.payment_method.display_last4 = "424"),
      "$.payment_method.display_last4",
      "4 digits"
    ],
    ["card metadata missing", (r) => delete r.payment_method.metadata, "$.payment_method.metadata", "is required"],
    [
      "card metadata not an object",
      (r) => (r.payment_method.metadata = ["bank"]),
      "$.payment_method.metadata",
      "must be an object"
    ],
    [
      "virtual not a boolean",
      (r) => (r.payment_method.virtual = "no"),
      "$.payment_method.virtual",
      "must be a boolean"
    ],
    [
      "checks_performed not strings",
      (r) => (r.payment_method.checks_performed = ["avs", 1]),
      "$.payment_method.checks_performed[1]",
      "must be a string"
    ],
    ["allowance reason", (r) => (r.allowance.reason = "recurring"), "$.allowance.reason", "must be \"one_time\""],
    ["max_amount zero", (r) => (r.allowance.max_amount = 0), "$.allowance.max_amount", "positive integer"],
    ["max_amount negative", (r) => (r.allowance.max_amount = -5), "$.allowance.max_amount", "positive integer"],
    ["max_amount fractional", (r) => (r.allowance.max_amount = 10.5), "$.allowance.max_amount", "positive integer"],
    ["max_amount a string", (r) => (r.allowance.max_amount = "100"), "$.allowance.max_amount", "must be a number"],
    ["currency uppercase", (r) => (r.allowance.currency = "USD"), "$.allowance.currency", "lowercase ISO 4217"],
    [
      "checkout_session_id empty",
      (r) => (r.allowance.checkout_session_id = ""),
      "$.allowance.checkout_session_id",
      "must not be empty"
    ],
    ["merchant_id missing", (r) => delete r.allowance.merchant_id, "$.allowance.merchant_id", "is required"],
    ["expires_at not a timestamp", (r) => (r.allowance.expires_at = "tomorrow"), "$.allowance.expires_at", "RFC 3339"],
    [
      "expires_at without zone",
      (r) => (r.allowance.expires_at = "2026-02-01T00:00:00"),
      "$.allowance.expires_at",
      "RFC 3339"
    ],
    [
      "expires_at impossible date",
      (r) => (r.allowance.expires_at = "2026-02-30T00:00:00Z"),
      "$.allowance.expires_at",
      "RFC 3339"
    ],
    ["billing name missing", (r) => delete r.billing_address.name, "$.billing_address.name", "is required"],
    [
      "billing line_one empty",
      (r) => (r.billing_address.line_one = ""),
      "$.billing_address.line_one",
      "must not be empty"
    ],
    ["billing country 3 letters", (r) => (r.billing_address.country = "USA"), "$.billing_address.country", "alpha-2"],
    [
      "billing postal_code missing",
      (r) => delete r.billing_address.postal_code,
      "$.billing_address.postal_code",
      "is required"
    ],
    ["risk_signals empty", (r) => (r.risk_signals = []), "$.risk_signals", "at least 1 risk signal"],
    ["risk_signals not an array", (r) => (r.risk_signals = {}), "$.risk_signals", "must be an array"],
    [
      "risk signal type",
      (r) => (r.risk_signals[0].type = "fraud"),
      "$.risk_signals[0].type",
      "must be \"card_testing\""
    ],
    ["risk signal score", (r) => (r.risk_signals[0].score = 1.5), "$.risk_signals[0].score", "must be an integer"],
    [
      "risk signal action",
      (r) => r.risk_signals.push({ type: "card_testing", score: 1, action: "deny" }),
      "$.risk_signals[1].action",
      "must be one of \"blocked\", \"manual_review\", \"authorized\""
    ]
  ]

  for (const [name, mutate, param, message] of cases) {
    it(`rejects: ${name}`, () => {
      const failure = decodeFailure(with_(mutate))
      expect(failure.status).toBe(400)
      expect(failure.error.type).toBe("invalid_request")
      expect(failure.error.code).toBe("invalid_card")
      expect(failure.error.param).toBe(param)
      expect(failure.error.message).toContain(message)
      noCardData(failure.error.message)
      expect(Schema.is(DelegateError)(failure.error)).toBe(true)
    })
  }

  it("names the request body when it is not an object", () => {
    const failure = decodeFailure(null)
    expect(failure.error.param).toBe("$")
    expect(failure.error.message).toBe("request body must be an object")
  })

  it("never echoes a bad card number or cvc", () => {
    const badNumber = "4242-4242-4242-4242"
    const badCvc = "99999"
    const f1 = decodeFailure(with_((r) => (r.payment_method.number = badNumber)))
    noCardData(f1.error.message, badNumber)
    expect(f1.error.message).toBe("payment_method.number must be 12 to 19 digits")
    const f2 = decodeFailure(with_((r) => (r.payment_method.cvc = badCvc)))
    noCardData(f2.error.message, badCvc)
    expect(f2.error.message).toBe("payment_method.cvc must be 3 or 4 digits")
    // and not through the error object as a whole either
    noCardData(JSON.stringify(f1), badNumber)
    noCardData(JSON.stringify(f2), badCvc)
  })

  it("converts a raw ParseError too", () => {
    const result = Schema.decodeUnknownEither(DelegatePaymentRequest)(with_((r) => (r.payment_method.exp_year = "x")))
    if (Either.isRight(result)) throw new Error("expected failure")
    const failure = delegateErrorFromParseError(result.left)
    expect(failure.error.param).toBe("$.payment_method.exp_year")
    expect(failure.error.message).toBe("payment_method.exp_year must be four digits")
  })

  it("describes the response and error shapes", () => {
    expect(
      Schema.is(DelegatePaymentResponse)({ id: "vt_1", created: "2026-01-30T12:00:00.000Z", metadata: { a: "b" } })
    ).toBe(
      true
    )
    expect(Schema.is(DelegateError)({ type: "rate_limit_exceeded", code: "too_many_requests", message: "slow down" }))
      .toBe(true)
    expect(Schema.is(DelegateError)({ type: "invalid_request", code: "idempotency_in_flight", message: "m" })).toBe(
      true
    )
    expect(Schema.is(DelegateError)({ type: "invalid_request", code: "unknown", message: "m" })).toBe(false)
  })
})

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
