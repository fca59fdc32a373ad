/**
 * The Delegate Payment API's resources (CONTRACT §7). `DelegatePaymentRequest` is 2025-09-29's and the domain's view of
 * every version's (`wire/acp/`). Every refinement's message states the expectation only: the stock ones echo the value.
 */
import { Schema } from "effect"
import { BoundedString, CurrencyCode, JsonPath, MAX_AMOUNT, optional, Timestamp } from "../../shared/schema-helpers.ts"

/** A string matching `regex`; `expectation` is the whole message ("must be …"), never the value. */
export const Matching = (regex: RegExp, expectation: string) =>
  Schema.String.pipe(Schema.pattern(regex, { message: () => expectation }))

export const MaxString = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/** `payment_method.metadata`, an `object` in the interface document; not stored. */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  description: "Additional data about the payment method (any JSON object)"
})

export const StringMap = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  identifier: "StringMap",
  description: "String-to-string key-value pairs"
})
export type StringMap = typeof StringMap.Type

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * An RFC 3339 timestamp with a mandatory offset to epoch ms, fractions beyond ms truncated; `undefined` for anything
 * else, impossible dates included. A leap second (`:60`) rolls over.
 */
export const parseTimestamp = (input: string): number | undefined => {
  const m = rfc3339.exec(input)
  if (m === null) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = Number(m[6])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 60) return undefined
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0").slice(0, 3))
  let offsetMinutes = 0
  if (m[8] === undefined) {
    const offsetHours = Number(m[10])
    const offsetMins = Number(m[11])
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day) // Date.UTC would map years 0-99 to 1900-1999
  date.setUTCHours(hour, minute, second, millis)
  const result = date.getTime() - offsetMinutes * 60_000
  // An offset can move the instant out of years 0000–9999, which RFC 3339 (and so the stores) cannot represent.
  return result >= MIN_RFC3339_MILLIS && result <= MAX_RFC3339_MILLIS ? result : undefined
}

const MIN_RFC3339_MILLIS = Date.parse("0000-01-01T00:00:00.000Z")
const MAX_RFC3339_MILLIS = Date.parse("9999-12-31T23:59:59.999Z")

export const RequestTimestamp = Schema.String.pipe(
  Schema.filter((s) => parseTimestamp(s) !== undefined, {
    message: () => "must be an RFC 3339 timestamp with a time zone, e.g. 2026-01-30T12:00:00Z"
  })
).annotations({ identifier: "RequestTimestamp" })

export const CardNumberType = Schema.Literal("fpan", "network_token")
export type CardNumberType = typeof CardNumberType.Type

export const FundingType = Schema.Literal("credit", "debit", "prepaid")
export type FundingType = typeof FundingType.Type

/** The card fields every version checks alike (each adds `eci_value`, `checks_performed`, `iin`, `metadata`). */
export const cardFields = {
  type: Schema.Literal("card"),
  card_number_type: CardNumberType,
  number: Matching(/^[0-9]{12,19}$/, "must be 12 to 19 digits"),
  exp_month: optional(Matching(/^(0[1-9]|1[0-2])$/, "must be two digits from 01 to 12")),
  exp_year: optional(Matching(/^[0-9]{4}$/, "must be four digits")),
  name: optional(MaxString(256)),
  cvc: optional(Matching(/^[0-9]{3,4}$/, "must be 3 or 4 digits")),
  cryptogram: optional(MaxString(1024)),
  display_card_funding_type: FundingType,
  display_wallet_type: optional(MaxString(64)),
  display_brand: optional(MaxString(64)),
  display_last4: optional(Matching(/^[0-9]{4}$/, "must be 4 digits")),
  virtual: optional(Schema.Boolean)
}

export const PaymentMethodCard = Schema.Struct({
  ...cardFields,
  eci_value: optional(MaxString(64)),
  checks_performed: optional(
    Schema.Array(MaxString(64)).pipe(Schema.maxItems(32, { message: () => "must have at most 32 entries" }))
  ),
  iin: optional(Matching(/^[0-9]{6}$/, "must be the first 6 digits of the card")),
  metadata: JsonObject
}).annotations({ identifier: "PaymentMethodCard" })
export type PaymentMethodCard = typeof PaymentMethodCard.Type

/** `state` may be empty (many countries have none); whether `country` is an assigned code is a 422 check. */
export const DelegateAddress = Schema.Struct({
  name: BoundedString(256),
  line_one: BoundedString(256),
  line_two: optional(MaxString(256)),
  city: BoundedString(128),
  state: MaxString(128),
  country: Matching(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 country code"),
  postal_code: BoundedString(32)
}).annotations({ identifier: "DelegateAddress" })
export type DelegateAddress = typeof DelegateAddress.Type

export const Allowance = Schema.Struct({
  reason: Schema.Literal("one_time"),
  max_amount: Schema.Number.pipe(
    Schema.int({ message: () => "must be a positive integer amount in minor units" }),
    Schema.greaterThan(0, { message: () => "must be a positive integer amount in minor units" }),
    Schema.lessThanOrEqualTo(MAX_AMOUNT, { message: () => `must be at most ${MAX_AMOUNT}` })
  ),
  currency: CurrencyCode,
  checkout_session_id: BoundedString(256),
  merchant_id: BoundedString(256),
  expires_at: RequestTimestamp
}).annotations({ identifier: "Allowance" })
export type Allowance = typeof Allowance.Type

export const RiskSignalAction = Schema.Literal("blocked", "manual_review", "authorized")
export type RiskSignalAction = typeof RiskSignalAction.Type

export const RiskSignal = Schema.Struct({
  type: Schema.Literal("card_testing"),
  score: Schema.Number.pipe(Schema.int({ message: () => "must be an integer" })),
  action: RiskSignalAction
}).annotations({ identifier: "RiskSignal" })
export type RiskSignal = typeof RiskSignal.Type

export const MAX_RISK_SIGNALS = 100

export const DelegatePaymentRequest = Schema.Struct({
  payment_method: PaymentMethodCard,
  allowance: Allowance,
  billing_address: optional(DelegateAddress),
  risk_signals: Schema.Array(RiskSignal).pipe(
    Schema.minItems(1, { message: () => "must contain at least 1 risk signal" }),
    Schema.maxItems(MAX_RISK_SIGNALS, { message: () => `must contain at most ${MAX_RISK_SIGNALS} risk signals` })
  ),
  metadata: StringMap
}).annotations({ identifier: "DelegatePaymentRequest" })
export type DelegatePaymentRequest = typeof DelegatePaymentRequest.Type

export const DelegatePaymentResponse = Schema.Struct({
  id: Schema.String.pipe(Schema.startsWith("vt_")).annotations({ description: "Vault token identifier" }),
  created: Timestamp,
  metadata: StringMap
}).annotations({ identifier: "DelegatePaymentResponse" })
export type DelegatePaymentResponse = typeof DelegatePaymentResponse.Type

export const DelegateErrorType = Schema.Literal(
  "invalid_request",
  "rate_limit_exceeded",
  "processing_error",
  "service_unavailable"
)
export type DelegateErrorType = typeof DelegateErrorType.Type

/** The interface document's closed set, plus `idempotency_in_flight` (CONTRACT §3, §6). */
export const DelegateErrorCode = Schema.Literal(
  "invalid_card",
  "duplicate_request",
  "idempotency_conflict",
  "too_many_requests",
  "idempotency_in_flight"
)
export type DelegateErrorCode = typeof DelegateErrorCode.Type

export const DelegateError = Schema.Struct({
  type: DelegateErrorType,
  code: DelegateErrorCode,
  message: Schema.String,
  param: optional(JsonPath)
}).annotations({ identifier: "DelegateError" })
export type DelegateError = typeof DelegateError.Type
