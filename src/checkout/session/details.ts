/**
 * What a session keeps besides the fields every version shows: data that only some wire formats
 * carry (a buyer's full profile, the contact of the fulfillment details, locale, metadata, notes,
 * consents, risk signals, attribution, the cancel reason). The domain stores it as received
 * (already decoded by the request's version) and each version's codec shows what its format has.
 * It is one internal field of the stored session, so the 2025-09-29 projection of a stored session
 * (`INTERNAL_SESSION_FIELDS`) never shows it.
 */
import { Schema } from "effect"
import { optional } from "../../shared/schema-helpers.ts"

/** A JSON object kept as received (decoded by the request's version schema before it gets here). */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type JsonObject = typeof JsonObject.Type

/** Who receives the order, beside the fulfillment address; `company` is the address's. */
export const FulfillmentContact = Schema.Struct({
  name: optional(Schema.String),
  phone_number: optional(Schema.String),
  email: optional(Schema.String),
  company: optional(Schema.String)
}).annotations({ identifier: "FulfillmentContact" })
export type FulfillmentContact = typeof FulfillmentContact.Type

export const MarketingConsent = Schema.Struct({
  channel: Schema.String,
  opted_in: Schema.Boolean
}).annotations({ identifier: "MarketingConsent" })
export type MarketingConsent = typeof MarketingConsent.Type

export const SessionDetails = Schema.Struct({
  /** The buyer as a version with a richer buyer sent it (names may be absent, more fields present). */
  buyer: optional(JsonObject),
  fulfillment_contact: optional(FulfillmentContact),
  locale: optional(Schema.String),
  timezone: optional(Schema.String),
  metadata: optional(JsonObject),
  order_notes: optional(Schema.String),
  affiliate_attribution: optional(JsonObject),
  marketing_consents: optional(Schema.Array(MarketingConsent)),
  risk_signals: optional(JsonObject),
  /** Why the agent canceled (`intent_trace`), when it said. */
  intent_trace: optional(JsonObject)
}).annotations({ identifier: "SessionDetails" })
export type SessionDetails = typeof SessionDetails.Type

/**
 * The details after a change: each field the change carries replaces the stored one; `clearBuyer`
 * drops the stored buyer profile (a buyer given in a format without one replaces it entirely).
 */
export const mergeDetails = (
  current: SessionDetails | undefined,
  change: SessionDetails | undefined,
  clearBuyer: boolean
): SessionDetails | undefined => {
  const merged: { -readonly [K in keyof SessionDetails]: SessionDetails[K] } = { ...current, ...change }
  if (clearBuyer && change?.buyer === undefined) delete merged.buyer
  return Object.keys(merged).length === 0 ? undefined : merged
}
