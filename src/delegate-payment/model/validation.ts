/**
 * Validation of a Delegate Payment request (CONTRACT §7): storable text (400), the decode (400), no card number
 * outside `payment_method.number` (400), then the rules beyond types (422). No message here contains an input value.
 */
import { Data, Either, type ParseResult, Schema } from "effect"
import { luhnValid, MISPLACED_CARD_NUMBER } from "../../shared/card-numbers.ts"
import { isCountry, isCurrency } from "../../shared/iso-codes.ts"
import { cardNumberPath } from "../../shared/json-text.ts"
import { firstSchemaFailure } from "../../shared/schema-failure.ts"
import { toJsonPath } from "../../shared/schema-helpers.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../../shared/storable-text.ts"
import { detectCardBrand } from "./card-number.ts"
import { type DelegateError, DelegatePaymentRequest, type FundingType, parseTimestamp } from "./delegate-payment.ts"

export class DelegateValidationFailure extends Data.TaggedError("DelegateValidationFailure")<{
  readonly status: 400 | 422
  readonly error: DelegateError
}> {}

const invalidCard = (status: 400 | 422, param: string, message: string): DelegateValidationFailure =>
  new DelegateValidationFailure({ status, error: { type: "invalid_request", code: "invalid_card", message, param } })

/** `$.payment_method.number` → `payment_method.number`; the root is "request body". */
export const fieldLabel = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0 ? "request body" : labelOfJsonPath(toJsonPath(path))

const labelOfJsonPath = (jsonPath: string): string => jsonPath.startsWith("$.") ? jsonPath.slice(2) : jsonPath.slice(1)

export const delegateErrorFromParseError = (
  error: ParseResult.ParseError | ParseResult.ParseIssue
): DelegateValidationFailure => {
  const first = firstSchemaFailure(error)
  return invalidCard(400, toJsonPath(first.path), `${fieldLabel(first.subject)} ${first.expectation}`)
}

/** `schema` is one version's request (`wire/acp/`); unknown fields are ignored. */
const makeDecoder = <A extends DelegatePaymentRequest, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (input: unknown): Either.Either<DelegatePaymentRequest, DelegateValidationFailure> =>
    Either.mapLeft(decode(input), delegateErrorFromParseError)
}

export const decodeDelegatePaymentRequest = makeDecoder(DelegatePaymentRequest)

/** A request that passed every check, with what may be stored in clear next to the encrypted card. */
export interface ValidatedDelegatePayment {
  readonly request: DelegatePaymentRequest
  readonly brand: string
  readonly last4: string
  readonly fundingType: FundingType
  /** `allowance.expires_at`, epoch ms. */
  readonly expiresAtMillis: number
}

/** The rules beyond the schema, in field order, the first failure winning; 422, but 400 for an unparsable expiry. */
export const validateDelegatePayment = (
  request: DelegatePaymentRequest,
  nowMillis: number
): Either.Either<ValidatedDelegatePayment, DelegateValidationFailure> => {
  const card = request.payment_method

  if (card.card_number_type === "fpan") {
    if (!luhnValid(card.number)) {
      return Either.left(
        invalidCard(
          422,
          "$.payment_method.number",
          "payment_method.number is not a valid card number (Luhn check failed)"
        )
      )
    }
    if (card.iin !== undefined && !card.number.startsWith(card.iin)) {
      return Either.left(
        invalidCard(
          422,
          "$.payment_method.iin",
          `payment_method.iin must be the first ${card.iin.length} digits of payment_method.number`
        )
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
      return Either.left(
        invalidCard(422, "$.payment_method.exp_year", "the card has expired (payment_method.exp_year is in the past)")
      )
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
      invalidCard(
        422,
        `$.risk_signals[${blocked}]`,
        `risk_signals[${blocked}] has action "blocked": the card cannot be tokenized`
      )
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

/** Only the number is encrypted: the JSONPath of the first card number elsewhere (a value or a key, numbers too). */
const cardNumberOutsideItsField = (request: DelegatePaymentRequest): string | undefined =>
  cardNumberPath({ ...request, payment_method: { ...request.payment_method, number: "" } })

/** The whole check of the tokenize route, in the module comment's order, decoding with one version's `schema`. */
export const makeDelegatePaymentParser = <A extends DelegatePaymentRequest, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = makeDecoder(schema)
  return (input: unknown, nowMillis: number): Either.Either<ValidatedDelegatePayment, DelegateValidationFailure> => {
    const unstorable = unstorableTextPath(input)
    if (unstorable !== undefined) {
      return Either.left(invalidCard(400, unstorable, `The body ${UNSTORABLE_TEXT_MESSAGE}.`))
    }
    return Either.flatMap(decode(input), (request) => {
      const misplaced = cardNumberOutsideItsField(request)
      return misplaced === undefined
        ? validateDelegatePayment(request, nowMillis)
        : Either.left(invalidCard(400, misplaced, `${labelOfJsonPath(misplaced)} ${MISPLACED_CARD_NUMBER}`))
    })
  }
}

export const parseDelegatePayment = makeDelegatePaymentParser(DelegatePaymentRequest)
