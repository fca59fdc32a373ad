/** What only some wire formats carry, stored as decoded; an internal field, which 2025-09-29 never shows. */
import { Schema } from "effect"
import { optional } from "../../shared/schema-helpers.ts"

export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type JsonObject = typeof JsonObject.Type

/** `company` is the fulfillment address's. */
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

/** The price an agent saw in a product feed for the item at `index` of the request's line items. */
export const SuggestedPrice = Schema.Struct({
  index: Schema.Int,
  item_id: Schema.String,
  amount: Schema.Int,
  feed_id: Schema.String
}).annotations({ identifier: "SuggestedPrice" })
export type SuggestedPrice = typeof SuggestedPrice.Type

export const SessionDetails = Schema.Struct({
  /** A richer buyer as sent: names may be absent. */
  buyer: optional(JsonObject),
  fulfillment_contact: optional(FulfillmentContact),
  locale: optional(Schema.String),
  timezone: optional(Schema.String),
  metadata: optional(JsonObject),
  order_notes: optional(Schema.String),
  affiliate_attribution: optional(JsonObject),
  marketing_consents: optional(Schema.Array(MarketingConsent)),
  risk_signals: optional(JsonObject),
  /** Why the agent canceled. */
  intent_trace: optional(JsonObject),
  /** The agent platform's profile URL (UCP `UCP-Agent`): where its order events go. */
  agent_profile: optional(Schema.String),
  /** Where and how the buyer shops, as the agent believes (UCP `context`): provisional, shown back. */
  context: optional(JsonObject),
  /** The payment instruments an agent chose before completing, without credentials: shown back. */
  payment_instruments: optional(Schema.Array(JsonObject)),
  /** Of the session's items as last given; informative only: the catalog's price applies. */
  suggested_prices: optional(Schema.Array(SuggestedPrice))
}).annotations({ identifier: "SessionDetails" })
export type SessionDetails = typeof SessionDetails.Type

/** Each field given replaces the stored one; `clearBuyer` drops the stored buyer profile. */
export const mergeDetails = (
  current: SessionDetails | undefined,
  change: SessionDetails | undefined,
  clearBuyer: boolean
): SessionDetails | undefined => {
  const merged: { -readonly [K in keyof SessionDetails]: SessionDetails[K] } = { ...current, ...change }
  if (clearBuyer && change?.buyer === undefined) delete merged.buyer
  return Object.keys(merged).length === 0 ? undefined : merged
}
