/** Where and how a purchase reaches the buyer: the address, and the fulfillment options offered for it. */
import { Schema } from "effect"
import { Amount, BoundedString, optional, Timestamp } from "../../shared/schema-helpers.ts"

export const CountryCode = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{2}$/, { message: () => "must be an ISO 3166-1 alpha-2 country code" })
).annotations({ identifier: "CountryCode", examples: ["US"] })

export const Address = Schema.Struct({
  name: BoundedString(256, "Full name of the recipient"),
  line_one: BoundedString(256, "Primary street line"),
  line_two: optional(Schema.String.pipe(Schema.maxLength(256, { message: () => "must be at most 256 characters" }))),
  city: BoundedString(128, "City or locality"),
  state: BoundedString(128, "State, province or region"),
  country: CountryCode,
  postal_code: BoundedString(32, "ZIP or postal code")
}).annotations({ identifier: "Address" })
export type Address = typeof Address.Type

export const FulfillmentOptionShipping = Schema.Struct({
  type: Schema.Literal("shipping"),
  id: Schema.String,
  title: Schema.String,
  subtitle: Schema.String,
  carrier: Schema.String,
  earliest_delivery_time: Timestamp,
  latest_delivery_time: Timestamp,
  subtotal: Amount,
  tax: Amount,
  total: Amount
}).annotations({ identifier: "FulfillmentOptionShipping" })
export type FulfillmentOptionShipping = typeof FulfillmentOptionShipping.Type

export const FulfillmentOptionDigital = Schema.Struct({
  type: Schema.Literal("digital"),
  id: Schema.String,
  title: Schema.String,
  subtitle: Schema.String,
  subtotal: Amount,
  tax: Amount,
  total: Amount
}).annotations({ identifier: "FulfillmentOptionDigital" })
export type FulfillmentOptionDigital = typeof FulfillmentOptionDigital.Type

export const FulfillmentOption = Schema.Union(FulfillmentOptionShipping, FulfillmentOptionDigital)
export type FulfillmentOption = typeof FulfillmentOption.Type
