/**
 * The delegate payment request schema: what a valid request may omit or add, every field's 400
 * (`invalid_card`, with the field's param and a message that never echoes card data), and the
 * response and error shapes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import {
  DelegateError,
  DelegatePaymentRequest,
  DelegatePaymentResponse
} from "../../src/delegate-payment/model/delegate-payment.ts"
import {
  decodeDelegatePaymentRequest,
  delegateErrorFromParseError,
  parseDelegatePayment
} from "../../src/delegate-payment/model/validation.ts"
import { decodeFailure, noCardData, NOW, validRequest, with_ } from "./delegate-payment-fixtures.ts"

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
