/**
 * The Delegate Payment API as the official ACP schemas define it from 2026-01-30 on
 * (`spec/<version>/json-schema/schema.delegate_payment.json` at c2afc86; docs/protocol-versions.md
 * §4): the pieces 2026-01-30 and 2026-04-17 share, parameterized where they differ (`iin` length,
 * the minimum number of risk signals, the `code` enum of the error object).
 *
 * Kept from the official text: `checks_performed` items `avs | cvv | ani | auth0`;
 * `payment_method.metadata` and `metadata` string-to-string; `eci_value` at most 2 characters;
 * `display_last4` exactly 4 digits; the address limits (name ≤ 256, lines and city ≤ 60, postal
 * code ≤ 20, country 2 characters). Stricter than the official text, as in 2025-09-29 and for the
 * same reasons: digits-only card fields (number 12–19, cvc 3–4, exp_month 01–12, exp_year 4), an
 * IIN of at least 6 digits, non-empty required strings, upper bounds on free text and lists
 * (what storage keeps), and a positive `max_amount`. Unknown fields are ignored, as in every
 * version (CONTRACT §3), although the official objects are closed.
 *
 * Every refusal answers with a code of the version's closed enum, which has nothing for an API
 * key, a signature, a content type, malformed JSON, a body too large or a server failure
 * (the official examples for 401/500/503 use codes outside the enum themselves).
 * The least wrong member is chosen by what the client should do:
 * - `invalid_card` — the enum's code for a refused request ("fix the request, do not retry as is"),
 *   which the official examples use for any invalid field — for 401 (API key, `param`
 *   `$.headers['Authorization']`; signature, `$.headers['Signature']`), 400 content type
 *   (`$.headers['Content-Type']`) and malformed JSON, and 413;
 * - `too_many_requests` — "retry later", the only retryable code of the 2026-01-30 enum — for 500
 *   and 503 (whose `type`, `processing_error` / `service_unavailable`, says what happened).
 */
import { Schema } from "effect"
import { BoundedString, JsonPath, optional } from "../../../shared/schema-helpers.ts"
import {
  Allowance,
  cardFields,
  DelegateErrorType,
  Matching,
  MAX_RISK_SIGNALS,
  MaxString,
  RiskSignal,
  StringMap
} from "../../model/delegate-payment.ts"
import type { DelegateErrorVocabulary } from "./codec.ts"

/** The checks the official `checks_performed` allows. */
export const CheckPerformed = Schema.Literal("avs", "cvv", "ani", "auth0")

/** An `iin` of 6 to `maxDigits` digits (the official `maxLength` of the version). */
export const Iin = (maxDigits: 6 | 8) =>
  maxDigits === 6
    ? Matching(/^[0-9]{6}$/, "must be the first 6 digits of the card")
    : Matching(new RegExp(`^[0-9]{6,${maxDigits}}$`), `must be the first 6 to ${maxDigits} digits of the card`)

export const officialPaymentMethodCard = (iinDigits: 6 | 8) =>
  Schema.Struct({
    ...cardFields,
    eci_value: optional(MaxString(2)),
    checks_performed: optional(
      Schema.Array(CheckPerformed).pipe(Schema.maxItems(32, { message: () => "must have at most 32 entries" }))
    ),
    iin: optional(Iin(iinDigits)),
    metadata: StringMap
  }).annotations({ identifier: "PaymentMethodCard" })

export const OfficialDelegateAddress = Schema.Struct({
  name: BoundedString(256),
  line_one: BoundedString(60),
  line_two: optional(MaxString(60)),
  city: BoundedString(60),
  state: MaxString(128),
  country: Matching(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 country code"),
  postal_code: BoundedString(20)
}).annotations({ identifier: "Address" })

const RiskSignals = (minItems: 0 | 1) => {
  const bounded = Schema.Array(RiskSignal).pipe(
    Schema.maxItems(MAX_RISK_SIGNALS, { message: () => `must contain at most ${MAX_RISK_SIGNALS} risk signals` })
  )
  return minItems === 0 ? bounded : bounded.pipe(
    Schema.minItems(1, { message: () => "must contain at least 1 risk signal" })
  )
}

export const officialDelegatePaymentRequest = (options: {
  readonly iinDigits: 6 | 8
  readonly minRiskSignals: 0 | 1
}) =>
  Schema.Struct({
    payment_method: officialPaymentMethodCard(options.iinDigits),
    allowance: Allowance,
    billing_address: optional(OfficialDelegateAddress),
    risk_signals: RiskSignals(options.minRiskSignals),
    metadata: StringMap
  }).annotations({ identifier: "DelegatePaymentRequest" })

/** The error object with the version's `code` enum (2026-04-17 adds `supported_versions`, unused here). */
export const officialDelegateError = <const Codes extends readonly [string, ...Array<string>]>(codes: Codes) =>
  Schema.Struct({
    type: DelegateErrorType,
    code: Schema.Literal(...codes),
    message: Schema.String,
    param: optional(JsonPath),
    supported_versions: optional(Schema.Array(Schema.String))
  }).annotations({ identifier: "Error" })

/** The non-idempotency refusals in a closed enum that has `invalid_card` and `too_many_requests`. */
export const officialDelegateErrors: DelegateErrorVocabulary<"invalid_card" | "too_many_requests"> = {
  invalid_request: { code: "invalid_card" },
  invalid_content_type: { code: "invalid_card", param: "$.headers['Content-Type']" },
  invalid_json: { code: "invalid_card" },
  unauthorized: { code: "invalid_card", param: "$.headers['Authorization']" },
  invalid_signature: { code: "invalid_card", param: "$.headers['Signature']" },
  request_too_large: { code: "invalid_card" },
  unprocessable: { code: "invalid_card" },
  rate_limited: { code: "too_many_requests" },
  internal: { code: "too_many_requests" },
  unavailable: { code: "too_many_requests" }
}
