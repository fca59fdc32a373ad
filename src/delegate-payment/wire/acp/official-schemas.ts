/**
 * The official Delegate Payment API of 2026-01-30 on (docs/protocol-versions.md §4), parameterized where versions
 * differ. What is kept of it, what is stricter, and why each refusal takes its code: docs/decisions.md.
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

/** `invalid_card`: fix the request; `too_many_requests`: retry later, the only retryable code of the enum. */
export const officialDelegateErrors: DelegateErrorVocabulary<"invalid_card" | "too_many_requests"> = {
  invalid_request: { code: "invalid_card" },
  invalid_content_type: { code: "invalid_card", param: "$.headers['Content-Type']" },
  invalid_json: { code: "invalid_card" },
  unauthorized: { code: "invalid_card", param: "$.headers['Authorization']" },
  invalid_signature: { code: "invalid_card", param: "$.headers['Signature']" },
  forbidden: { code: "invalid_card", param: "$.headers['Authorization']" },
  request_too_large: { code: "invalid_card" },
  unprocessable: { code: "invalid_card" },
  rate_limited: { code: "too_many_requests" },
  internal: { code: "too_many_requests" },
  unavailable: { code: "too_many_requests" }
}
