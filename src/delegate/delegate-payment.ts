/**
 * Wire schemas and pure validation of the Delegate Payment API (interface document "Delegate
 * Payment API resources", "Delegate Payment API", "Error object, Delegate Payment API"; CONTRACT §7).
 *
 * Two stages:
 * 1. `DelegatePaymentRequest` decodes the body strictly (types, enums, formats). A failure is a
 *    400 `invalid_request`/`invalid_card` with the JSONPath of the first problem
 *    (`delegateErrorFromParseError`). Unknown fields are ignored.
 * 2. `validateDelegatePayment` applies the semantic rules of CONTRACT §7 (Luhn, iin/last4
 *    consistency, card expiry, allowance expiry, known currency and country, blocked risk signal);
 *    each failure is a 422 `invalid_request`/`invalid_card` with a JSONPath `param`.
 *
 * Card data safety: no message produced here ever contains an input value. Every refinement has an
 * explicit message that states the expectation only, and decode failures are rendered from the
 * shared walker (`schema-failure.ts`; the stock formatters embed the actual value, e.g. the card
 * number).
 */
import { Data, Either, type ParseResult, Schema } from "effect"
import { isCountry, isCurrency } from "../shared/iso-codes.ts"
import { firstSchemaFailure } from "../shared/schema-failure.ts"
import { BoundedString, CurrencyCode, JsonPath, MAX_AMOUNT, optional, Timestamp, toJsonPath } from "../shared/schema-helpers.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../shared/storable-text.ts"

// ---------------------------------------------------------------------------------------------
// Small building blocks

/** A string matching `regex`; `expectation` is the whole message ("must be …"), never the value. */
const Matching = (regex: RegExp, expectation: string) =>
  Schema.String.pipe(Schema.pattern(regex, { message: () => expectation }))

/** A possibly empty string of at most `max` characters. */
const MaxString = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/**
 * Any JSON object (`payment_method.metadata`: the interface document types it `object`, unlike
 * the request's string-to-string `metadata`). Not stored: the vault keeps only the card.
 */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  description: "Additional data about the payment method (any JSON object)"
})

/** An object of string keys and string values (request `metadata`). */
export const StringMap = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  identifier: "StringMap",
  description: "String-to-string key-value pairs"
})
export type StringMap = typeof StringMap.Type

// ---------------------------------------------------------------------------------------------
// Timestamps

const rfc3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * Parses an RFC 3339 timestamp (the ISO 8601 profile used on the wire: date, `T`, time with
 * seconds, optional fraction, and a mandatory `Z` or `±HH:MM` offset) to Unix milliseconds.
 * Fractions beyond milliseconds are truncated. Returns `undefined` for anything else, including
 * impossible dates such as `2026-02-30`. A leap second (`:60`) is accepted and rolls over.
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
  // An offset can move the instant out of years 0000–9999, which RFC 3339 (and our stores, which
  // write it back in RFC 3339) cannot represent.
  return result >= MIN_RFC3339_MILLIS && result <= MAX_RFC3339_MILLIS ? result : undefined
}

const MIN_RFC3339_MILLIS = Date.parse("0000-01-01T00:00:00.000Z")
const MAX_RFC3339_MILLIS = Date.parse("9999-12-31T23:59:59.999Z")

/** RFC 3339 timestamp accepted in requests (with any offset; see `parseTimestamp`). */
export const RequestTimestamp = Schema.String.pipe(
  Schema.filter((s) => parseTimestamp(s) !== undefined, {
    message: () => "must be an RFC 3339 timestamp with a time zone, e.g. 2026-01-30T12:00:00Z"
  })
).annotations({ identifier: "RequestTimestamp" })

// ---------------------------------------------------------------------------------------------
// Request resources

export const CardNumberType = Schema.Literal("fpan", "network_token")
export type CardNumberType = typeof CardNumberType.Type

export const FundingType = Schema.Literal("credit", "debit", "prepaid")
export type FundingType = typeof FundingType.Type

/**
 * The card. `number` is digits only, 12 to 19 of them, for raw numbers and network tokens alike
 * (no spaces or dashes). `iin` is exactly 6 digits, as the interface document says ("first 6
 * digits of the card"); 8-digit BINs are not accepted in this field.
 */
export const PaymentMethodCard = Schema.Struct({
  type: Schema.Literal("card"),
  card_number_type: CardNumberType,
  number: Matching(/^[0-9]{12,19}$/, "must be 12 to 19 digits"),
  exp_month: optional(Matching(/^(0[1-9]|1[0-2])$/, "must be two digits from 01 to 12")),
  exp_year: optional(Matching(/^[0-9]{4}$/, "must be four digits")),
  name: optional(MaxString(256)),
  cvc: optional(Matching(/^[0-9]{3,4}$/, "must be 3 or 4 digits")),
  cryptogram: optional(MaxString(1024)),
  eci_value: optional(MaxString(64)),
  checks_performed: optional(
    Schema.Array(MaxString(64)).pipe(Schema.maxItems(32, { message: () => "must have at most 32 entries" }))
  ),
  iin: optional(Matching(/^[0-9]{6}$/, "must be the first 6 digits of the card")),
  display_card_funding_type: FundingType,
  display_wallet_type: optional(MaxString(64)),
  display_brand: optional(MaxString(64)),
  display_last4: optional(Matching(/^[0-9]{4}$/, "must be 4 digits")),
  metadata: JsonObject,
  virtual: optional(Schema.Boolean)
}).annotations({ identifier: "PaymentMethodCard" })
export type PaymentMethodCard = typeof PaymentMethodCard.Type

/**
 * Billing address (delegate form). `state` is required but may be empty (many countries have
 * none); the other required fields must not be empty. `country` is two letters here; whether it
 * is an assigned ISO 3166-1 code is a semantic check (422).
 */
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

// ---------------------------------------------------------------------------------------------
// Response and error resources

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

/** A validation failure of a delegate payment request: the HTTP status and the error body. */
export class DelegateValidationFailure extends Data.TaggedError("DelegateValidationFailure")<{
  readonly status: 400 | 422
  readonly error: DelegateError
}> {}

const invalidCard = (status: 400 | 422, param: string, message: string): DelegateValidationFailure =>
  new DelegateValidationFailure({ status, error: { type: "invalid_request", code: "invalid_card", message, param } })

// ---------------------------------------------------------------------------------------------
// Decode failures → delegate error (never echoing the input)

/** `$.payment_method.number` → `payment_method.number`; the root is "request body". */
export const fieldLabel = (path: ReadonlyArray<PropertyKey>): string => {
  if (path.length === 0) return "request body"
  const jsonPath = toJsonPath(path)
  return jsonPath.startsWith("$.") ? jsonPath.slice(2) : jsonPath.slice(1)
}

/** A decode failure of the delegate schemas → 400 `invalid_request`/`invalid_card` with a JSONPath. */
export const delegateErrorFromParseError = (
  error: ParseResult.ParseError | ParseResult.ParseIssue
): DelegateValidationFailure => {
  const first = firstSchemaFailure(error)
  return invalidCard(400, toJsonPath(first.path), `${fieldLabel(first.subject)} ${first.expectation}`)
}

const decodeRequest = Schema.decodeUnknownEither(DelegatePaymentRequest, {
  errors: "first",
  onExcessProperty: "ignore"
})

/** Decodes a request body (400 on failure). */
export const decodeDelegatePaymentRequest = (
  input: unknown
): Either.Either<DelegatePaymentRequest, DelegateValidationFailure> =>
  Either.mapLeft(decodeRequest(input), delegateErrorFromParseError)

// ---------------------------------------------------------------------------------------------
// Card helpers

/** Luhn (mod 10) check of a digit string. */
export const luhnValid = (digits: string): boolean => {
  if (!/^[0-9]+$/.test(digits)) return false
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

export type CardBrand = "visa" | "mastercard" | "amex" | "discover" | "unknown"

const brandPrefixes: ReadonlyArray<readonly [CardBrand, RegExp]> = [
  ["amex", /^3[47]/],
  ["visa", /^4/],
  ["mastercard", /^(5[1-5]|222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)/],
  ["discover", /^(6011|64[4-9]|65|622(12[6-9]|1[3-9][0-9]|[2-8][0-9]{2}|9[01][0-9]|92[0-5]))/]
]

/** Card brand from the leading digits of a card number (or an IIN). */
export const detectCardBrand = (number: string): CardBrand => {
  for (const [brand, prefix] of brandPrefixes) if (prefix.test(number)) return brand
  return "unknown"
}

// ---------------------------------------------------------------------------------------------
// Semantic validation (CONTRACT §7)

/** A request that passed every check, with what may be stored in clear next to the encrypted card. */
export interface ValidatedDelegatePayment {
  readonly request: DelegatePaymentRequest
  /** `display_brand` when given, else detected from the IIN / number. */
  readonly brand: string
  /** `display_last4` when given, else the last 4 digits of `number`. */
  readonly last4: string
  readonly fundingType: FundingType
  /** `allowance.expires_at` in Unix milliseconds. */
  readonly expiresAtMillis: number
}

/**
 * Semantic checks beyond the schema, in field order; the first failure wins. All are 422
 * `invalid_request`/`invalid_card` except an unparsable `allowance.expires_at` (400; normally
 * caught by the schema already).
 */
export const validateDelegatePayment = (
  request: DelegatePaymentRequest,
  nowMillis: number
): Either.Either<ValidatedDelegatePayment, DelegateValidationFailure> => {
  const card = request.payment_method

  if (card.card_number_type === "fpan") {
    if (!luhnValid(card.number)) {
      return Either.left(
        invalidCard(422, "$.payment_method.number", "payment_method.number is not a valid card number (Luhn check failed)")
      )
    }
    if (card.iin !== undefined && !card.number.startsWith(card.iin)) {
      return Either.left(
        invalidCard(422, "$.payment_method.iin", "payment_method.iin must be the first 6 digits of payment_method.number")
      )
    }
    if (card.display_last4 !== undefined && !card.number.endsWith(card.display_last4)) {
      return Either.left(
        invalidCard(
          422,
          "$.payment_method.display_last4",
          "payment_method.display_last4 must be the last 4 digits of payment_method.number"
        )
      )
    }
  }

  // A card is valid through the last day of its expiry month (UTC).
  const now = new Date(nowMillis)
  const nowYear = now.getUTCFullYear()
  const nowMonth = now.getUTCMonth() + 1
  if (card.exp_year !== undefined) {
    const expYear = Number(card.exp_year)
    if (expYear < nowYear) {
      return Either.left(invalidCard(422, "$.payment_method.exp_year", "the card has expired (payment_method.exp_year is in the past)"))
    }
    if (expYear === nowYear && card.exp_month !== undefined && Number(card.exp_month) < nowMonth) {
      // CONTRACT §7 names exp_year for any expired card, also when only the month is past.
      return Either.left(
        invalidCard(422, "$.payment_method.exp_year", "the card has expired (its expiry month is in the past)")
      )
    }
  }

  const expiresAtMillis = parseTimestamp(request.allowance.expires_at)
  if (expiresAtMillis === undefined) {
    return Either.left(
      invalidCard(400, "$.allowance.expires_at", "allowance.expires_at must be an RFC 3339 timestamp with a time zone")
    )
  }
  if (expiresAtMillis <= nowMillis) {
    return Either.left(invalidCard(422, "$.allowance.expires_at", "allowance.expires_at must be in the future"))
  }
  if (!isCurrency(request.allowance.currency)) {
    return Either.left(
      invalidCard(422, "$.allowance.currency", "allowance.currency must be a known ISO 4217 currency code")
    )
  }

  if (request.billing_address !== undefined && !isCountry(request.billing_address.country.toUpperCase())) {
    return Either.left(
      invalidCard(
        422,
        "$.billing_address.country",
        "billing_address.country must be an assigned ISO 3166-1 alpha-2 country code"
      )
    )
  }

  const blocked = request.risk_signals.findIndex((signal) => signal.action === "blocked")
  if (blocked >= 0) {
    return Either.left(
      invalidCard(422, `$.risk_signals[${blocked}]`, `risk_signals[${blocked}] has action "blocked": the card cannot be tokenized`)
    )
  }

  return Either.right({
    request,
    brand: card.display_brand ?? detectCardBrand(card.iin ?? card.number),
    last4: card.display_last4 ?? card.number.slice(-4),
    fundingType: card.display_card_funding_type,
    expiresAtMillis
  })
}

/**
 * The whole request check of the tokenize route, decoding with `schema` (the route's declared
 * payload, `DelegatePaymentRequest`): text storage can keep, then the decode (400), then the
 * rules above.
 */
export const makeDelegatePaymentParser = <I>(schema: Schema.Schema<DelegatePaymentRequest, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (input: unknown, nowMillis: number): Either.Either<ValidatedDelegatePayment, DelegateValidationFailure> => {
    const unstorable = unstorableTextPath(input)
    if (unstorable !== undefined) return Either.left(invalidCard(400, unstorable, `Text ${UNSTORABLE_TEXT_MESSAGE}.`))
    return Either.flatMap(
      Either.mapLeft(decode(input), delegateErrorFromParseError),
      (request) => validateDelegatePayment(request, nowMillis)
    )
  }
}

/** Decode then validate with `DelegatePaymentRequest`. */
export const parseDelegatePayment = makeDelegatePaymentParser(DelegatePaymentRequest)
