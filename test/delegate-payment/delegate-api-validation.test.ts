/**
 * POST /agentic_commerce/delegate_payment through the HTTP application (in memory, TestClock):
 * every field's 400 and every semantic 422 (`invalid_card` with the field's param, no card data
 * echoed), the body rules (JSON object, content type, malformed JSON, 1 MiB), and the expiry of
 * the card and of the allowance at the Clock's time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { CARD_NUMBER, DELEGATE_PATH, delegateRequestWith, validDelegateRequest } from "../support/delegate.ts"
import { post } from "../support/http.ts"
import { run, tokenize } from "./delegate-api-fixtures.ts"

describe("POST /agentic_commerce/delegate_payment: validation", () => {
  const rules: ReadonlyArray<readonly [string, 400 | 422, string, (r: Record<string, any>) => void]> = [
    // 400: decoding
    ["empty object", 400, "$.payment_method", (r) => Object.keys(r).forEach((k) => delete r[k])],
    ["payment_method missing", 400, "$.payment_method", (r) => delete r.payment_method],
    ["type not card", 400, "$.payment_method.type", (r) => (r.payment_method.type = "bank")],
    [
      "card_number_type unknown",
      400,
      "$.payment_method.card_number_type",
      (r) => (r.payment_method.card_number_type = "dpan")
    ],
    ["number with letters", 400, "$.payment_method.number", (r) => (r.payment_method.number = "4242x42424242424")],
    ["number too short", 400, "$.payment_method.number", (r) => (r.payment_method.number = "42424242")],
    ["exp_month 13", 400, "$.payment_method.exp_month", (r) => (r.payment_method.exp_month = "13")],
    ["exp_year two digits", 400, "$.payment_method.exp_year", (r) => (r.payment_method.exp_year = "30")],
    ["cvc two digits", 400, "$.payment_method.cvc", (r) => (r.payment_method.cvc = "98")],
    ["iin five digits", 400, "$.payment_method.iin", (r) => (r.payment_method.iin = "42424")],
    [
      "funding type unknown",
      400,
      "$.payment_method.display_card_funding_type",
      (r) => (r.payment_method.display_card_funding_type = "charge")
    ],
    ["payment_method.metadata missing", 400, "$.payment_method.metadata", (r) => delete r.payment_method.metadata],
    ["allowance reason recurring", 400, "$.allowance.reason", (r) => (r.allowance.reason = "recurring")],
    ["max_amount zero", 400, "$.allowance.max_amount", (r) => (r.allowance.max_amount = 0)],
    ["max_amount fractional", 400, "$.allowance.max_amount", (r) => (r.allowance.max_amount = 10.5)],
    ["currency uppercase", 400, "$.allowance.currency", (r) => (r.allowance.currency = "USD")],
    ["expires_at without zone", 400, "$.allowance.expires_at", (r) => (r.allowance.expires_at = "2099-01-30T13:00:00")],
    [
      "checkout_session_id empty",
      400,
      "$.allowance.checkout_session_id",
      (r) => (r.allowance.checkout_session_id = "")
    ],
    ["billing country three letters", 400, "$.billing_address.country", (r) => (r.billing_address.country = "USA")],
    ["risk_signals empty", 400, "$.risk_signals", (r) => (r.risk_signals = [])],
    ["risk signal action unknown", 400, "$.risk_signals[0].action", (r) => (r.risk_signals[0].action = "allow")],
    ["metadata value not a string", 400, "$.metadata.n", (r) => (r.metadata = { n: 1 })],
    // 400: text PostgreSQL cannot keep (it used to fail the insert: a 500)
    ["NUL in a metadata value", 400, "$.metadata.a", (r) => (r.metadata = { a: "x\u0000y" })],
    ["NUL in a metadata key", 400, "$.metadata[\"a\\u0000\"]", (r) => (r.metadata = { ["a\u0000"]: "x" })],
    ["unpaired surrogate in metadata", 400, "$.metadata.a", (r) => (r.metadata = { a: "x\ud800" })],
    [
      "NUL in checkout_session_id",
      400,
      "$.allowance.checkout_session_id",
      (r) => (r.allowance.checkout_session_id = "cs_\u0000")
    ],
    [
      "NUL in display_brand",
      400,
      "$.payment_method.display_brand",
      (r) => (r.payment_method.display_brand = "vi\u0000sa")
    ],
    [
      "NUL in card metadata",
      400,
      "$.payment_method.metadata.note[0]",
      (r) => (r.payment_method.metadata = { note: ["\u0000"] })
    ],
    // 400: a card number outside payment_method.number (it would be kept and shown in clear)
    ["a card number in metadata", 400, "$.metadata.card", (r) => (r.metadata = { card: `pan ${CARD_NUMBER}` })],
    [
      "a card number as a metadata key, masked in the param",
      400,
      "$.metadata[\"424242******4242\"]",
      (r) => (r.metadata = { [CARD_NUMBER]: "x" })
    ],
    [
      "a card number as a metadata key whose value is no string: the decode's param masked too",
      400,
      "$.metadata[\"424242******4242\"]",
      (r) => (r.metadata = { [CARD_NUMBER]: 1 })
    ],
    [
      "a card number, grouped, as the brand",
      400,
      "$.payment_method.display_brand",
      (r) => (r.payment_method.display_brand = "4242 4242 4242 4242")
    ],
    [
      "a card number in an address line",
      400,
      "$.billing_address.line_one",
      (r) => (r.billing_address.line_one = "5555-5555-5555-4444")
    ],
    [
      "a card number as a risk signal's score",
      400,
      "$.risk_signals[0].score",
      (r) => (r.risk_signals[0].score = 4242424242424242)
    ],
    [
      "expires_at past year 9999 once its offset is applied",
      400,
      "$.allowance.expires_at",
      (r) => (r.allowance.expires_at = "9999-12-31T23:59:59-23:59")
    ],
    // 422: semantic rules of CONTRACT §7
    ["Luhn", 422, "$.payment_method.number", (r) => (r.payment_method.number = "4242424242424241")],
    ["iin not the number's prefix", 422, "$.payment_method.iin", (r) => (r.payment_method.iin = "555555")],
    [
      "last4 not the number's end",
      422,
      "$.payment_method.display_last4",
      (r) => (r.payment_method.display_last4 = "1111")
    ],
    ["card expired last year", 422, "$.payment_method.exp_year", (r) => (r.payment_method.exp_year = "2025")],
    ["allowance expired", 422, "$.allowance.expires_at", (r) => (r.allowance.expires_at = "2026-01-30T11:59:59Z")],
    ["unknown currency", 422, "$.allowance.currency", (r) => (r.allowance.currency = "zzz")],
    ["unassigned country", 422, "$.billing_address.country", (r) => (r.billing_address.country = "ZZ")],
    [
      "blocked risk signal",
      422,
      "$.risk_signals[1]",
      (r) => r.risk_signals.push({ type: "card_testing", score: 99, action: "blocked" })
    ]
  ]
  for (const [name, status, param, mutate] of rules) {
    it.effect(`${status} invalid_card ${param}: ${name}`, () =>
      run(Effect.gen(function*() {
        const response = yield* tokenize(delegateRequestWith(mutate))
        expect(response.status).toBe(status)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "invalid_card",
          message: expect.any(String),
          param
        })
        expect(response.text).not.toContain(CARD_NUMBER)
      })))
  }

  it.effect("the body may not be JSON null, an array or a number", () =>
    run(Effect.gen(function*() {
      for (const body of ["null", "[]", "42"]) {
        const response = yield* tokenize(body)
        expect(response.status).toBe(400)
        expect(response.body).toMatchObject({ type: "invalid_request", code: "invalid_card", param: "$" })
      }
    })))

  it.effect("common body rules: content type, malformed JSON, empty body, more than 1 MiB", () =>
    run(Effect.gen(function*() {
      const text = yield* post(DELEGATE_PATH, JSON.stringify(validDelegateRequest()), { contentType: "text/plain" })
      expect(text.status).toBe(400)
      expect(text.body).toMatchObject({ type: "invalid_request", code: "invalid_content_type" })
      const malformed = yield* tokenize(`{"payment_method": {"number": "${CARD_NUMBER}"`)
      expect(malformed.status).toBe(400)
      expect(malformed.body).toMatchObject({ type: "invalid_request", code: "invalid_json" })
      expect(malformed.text).not.toContain(CARD_NUMBER)
      const empty = yield* tokenize("")
      expect(empty.status).toBe(400)
      const large = yield* tokenize(delegateRequestWith((r) => (r.metadata = { pad: "x".repeat(1024 * 1024) })))
      expect(large.status).toBe(413)
      expect(large.body).toMatchObject({ code: "request_too_large" })
    })))
})

describe("POST /agentic_commerce/delegate_payment: expiry at the Clock's time", () => {
  it.effect("a card is valid through the last millisecond of its expiry month (UTC)", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.payment_method.exp_month = "01"
        r.payment_method.exp_year = "2026"
      })
      yield* TestClock.setTime(Date.parse("2026-01-31T23:59:59.999Z"))
      expect((yield* tokenize(body)).status).toBe(201)
      yield* TestClock.setTime(Date.parse("2026-02-01T00:00:00.000Z"))
      const expired = yield* tokenize(body)
      expect(expired.status).toBe(422)
      // CONTRACT §7: exp_year, also when only the month is past.
      expect(expired.body).toMatchObject({ code: "invalid_card", param: "$.payment_method.exp_year" })
      yield* TestClock.setTime(Date.parse("2027-01-01T00:00:00.000Z"))
      const nextYear = yield* tokenize(body)
      expect(nextYear.body.param).toBe("$.payment_method.exp_year")
    })))

  it.effect("a card expiring in December is valid on Dec 31 and expired on Jan 1 (year boundary)", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.payment_method.exp_month = "12"
        r.payment_method.exp_year = "2026"
        r.allowance.expires_at = "2030-01-01T00:00:00Z"
      })
      yield* TestClock.setTime(Date.parse("2026-12-31T23:59:59.999Z"))
      expect((yield* tokenize(body)).status).toBe(201)
      yield* TestClock.setTime(Date.parse("2027-01-01T00:00:00.000Z"))
      const expired = yield* tokenize(body)
      expect(expired.status).toBe(422)
      expect(expired.body.param).toBe("$.payment_method.exp_year")
    })))

  it.effect("allowance.expires_at must be strictly after now (offsets honoured)", () =>
    run(Effect.gen(function*() {
      const at = (expires_at: string) => tokenize(delegateRequestWith((r) => (r.allowance.expires_at = expires_at)))
      expect((yield* at("2026-01-30T12:00:00.001Z")).status).toBe(201)
      expect((yield* at("2026-01-30T13:00:01+01:00")).status).toBe(201)
      const equal = yield* at("2026-01-30T12:00:00Z")
      expect(equal.status).toBe(422)
      expect(equal.body.param).toBe("$.allowance.expires_at")
      expect((yield* at("2026-01-30T13:00:00+01:00")).status).toBe(422)
      yield* TestClock.adjust("1 second")
      expect((yield* at("2026-01-30T12:00:01.000Z")).status).toBe(422)
      expect((yield* at("2026-01-30T12:00:01.001Z")).status).toBe(201)
    })))
})
