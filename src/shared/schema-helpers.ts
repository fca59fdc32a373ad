/** Building blocks of the wire schemas: exact optional fields, bounded strings, integer money, JSONPath. */
import { Schema } from "effect"
import { maskCardNumbers } from "./card-numbers.ts"

/** An optional key that is either absent or holds a value (never `undefined`, as in JSON). */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A non-empty string of at most `max` characters, after trimming nothing (we keep what the client sent). */
export const BoundedString = (max: number, description?: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  ).annotations(description ? { description } : {})

/** The largest amount accepted or produced (minor units); the catalog's bounds keep every session total below it. */
export const MAX_AMOUNT = 1_000_000_000_000_000

export const Amount = Schema.Int.pipe(
  Schema.nonNegative({ message: () => "must be a non-negative integer amount in minor units" }),
  Schema.lessThanOrEqualTo(MAX_AMOUNT, { message: () => `must be at most ${MAX_AMOUNT}` })
).annotations({ identifier: "Amount", description: "Integer amount in minor units of the currency" })

export const PositiveAmount = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(1, { message: () => "must be a positive integer amount in minor units" }),
  Schema.lessThanOrEqualTo(MAX_AMOUNT, { message: () => `must be at most ${MAX_AMOUNT}` })
).annotations({ identifier: "PositiveAmount", description: "Positive integer amount in minor units of the currency" })

export const SignedAmount = Schema.Int.annotations({ identifier: "SignedAmount" })

export const CurrencyCode = Schema.String.pipe(
  Schema.pattern(/^[a-z]{3}$/, { message: () => "must be a lowercase ISO 4217 currency code" })
).annotations({ identifier: "CurrencyCode", examples: ["usd"] })

export const Timestamp = Schema.String.annotations({
  identifier: "Timestamp",
  description: "RFC 3339 timestamp (UTC)",
  examples: ["2026-01-30T12:00:00.000Z"]
})

export const JsonPath = Schema.String.annotations({
  identifier: "JsonPath",
  description: "JSONPath of the field concerned, e.g. $.items[0].quantity"
})

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A decode path as JSONPath (`$.items[0].quantity`); a key holding a card number is masked, as errors go anywhere. */
export const toJsonPath = (path: ReadonlyArray<PropertyKey>, root = "$"): string =>
  root +
  path
    .map((key) =>
      typeof key === "number"
        ? `[${key}]`
        : identifier.test(String(key))
        ? `.${String(key)}`
        : `[${JSON.stringify(maskCardNumbers(String(key)))}]`
    )
    .join("")
