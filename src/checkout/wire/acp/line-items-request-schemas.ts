/** Request schemas of the line-items format, from each version's official JSON Schema (docs/protocol-versions.md). */
import { Schema } from "effect"
import { Address } from "../../../catalog/model/fulfillment.ts"
import { MAX_ITEMS, MAX_QUANTITY } from "../../../catalog/model/line-items.ts"
import { AUTHENTICATION_OUTCOMES } from "../../../payments/model/issuer-authentication.ts"
import { type ApiVersionName, isAtLeast } from "../../../shared/api-versions.ts"
import { BoundedString, optional, Timestamp } from "../../../shared/schema-helpers.ts"
import { DiscountsRequest } from "../../pricing/discounts.ts"
import { Email } from "../../session/schemas.ts"

export type Version2026 = Extract<ApiVersionName, "2026-01-30" | "2026-04-17">

export const Text = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

const Phone = Schema.String.pipe(
  Schema.pattern(/^\+?[0-9 ()\-.]{3,32}$/, { message: () => "must be a phone number" })
)

const itemFields = {
  id: BoundedString(256, "Item (product) identifier"),
  /** Not in the official `Item` (an open spec issue): accepted, 1 when absent. */
  quantity: optional(
    Schema.Int.pipe(
      Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" }),
      Schema.lessThanOrEqualTo(MAX_QUANTITY, { message: () => `must be at most ${MAX_QUANTITY}` })
    ).annotations({ description: "Units of the item; 1 when absent" })
  ),
  name: optional(Text(512)),
  unit_amount: optional(Schema.Int)
}

/** The price the agent saw in a feed (2026-04-17, from `spec/unreleased`): the catalog's price still applies. */
const SuggestedPrice = Schema.Struct({
  amount: Schema.Int,
  source: Schema.Struct({
    feed_id: BoundedString(256),
    channel: optional(Text(256)),
    feed_update_id: optional(Text(256)),
    updated_at: optional(Timestamp)
  }),
  observed_at: Timestamp
}).annotations({ identifier: "SuggestedPrice" })

export const RequestItem = Schema.Struct(itemFields).annotations({ identifier: "RequestItem" })
export const RequestItem0417 = Schema.Struct({ ...itemFields, suggested_price: optional(SuggestedPrice) })
  .annotations({ identifier: "RequestItem" })

const itemsOf = (version: Version2026) =>
  Schema.Array(isAtLeast(version, "2026-04-17") ? RequestItem0417 : RequestItem).pipe(
    Schema.maxItems(MAX_ITEMS, { message: () => `must contain at most ${MAX_ITEMS} items` })
  )

/** The address of this format: 2026-04-17 adds `company`. */
export const addressOf = (version: Version2026) =>
  isAtLeast(version, "2026-04-17")
    ? Schema.Struct({ ...Address.fields, company: optional(Text(256)) }).annotations({ identifier: "Address" })
    : Address

export const buyerOf = (_version: Version2026) =>
  Schema.Struct({
    first_name: optional(BoundedString(128)),
    last_name: optional(BoundedString(128)),
    full_name: optional(BoundedString(256)),
    email: Email,
    phone_number: optional(Phone),
    customer_id: optional(BoundedString(256)),
    account_type: optional(Schema.Literal("guest", "registered", "business")),
    authentication_status: optional(Schema.Literal("authenticated", "guest", "requires_signin")),
    company: optional(Schema.Struct({
      name: BoundedString(256),
      tax_id: optional(Text(64)),
      department: optional(Text(256)),
      cost_center: optional(Text(256))
    })),
    loyalty: optional(Schema.Struct({
      tier: optional(Text(128)),
      points_balance: optional(Schema.Int),
      member_since: optional(Timestamp)
    })),
    /** Refused: this merchant's taxes do not take exemption certificates (it would change the amounts). */
    tax_exemption: optional(Schema.Struct({
      certificate_id: BoundedString(256),
      certificate_type: Schema.Literal("resale", "exempt_organization", "government"),
      exempt_regions: optional(Schema.Array(Text(64))),
      expires_at: optional(Timestamp)
    }))
  }).annotations({ identifier: "Buyer" })

export const fulfillmentDetailsOf = (version: Version2026) =>
  Schema.Struct({
    name: optional(Text(256)),
    phone_number: optional(Phone),
    email: optional(Email),
    address: optional(addressOf(version))
  }).annotations({ identifier: "FulfillmentDetails" })

export const SelectedFulfillmentOption = Schema.Struct({
  type: Schema.Literal("shipping", "digital", "pickup", "local_delivery"),
  option_id: BoundedString(256),
  item_ids: Schema.Array(BoundedString(256)).pipe(Schema.maxItems(MAX_ITEMS))
}).annotations({ identifier: "SelectedFulfillmentOption" })

/** Split fulfillment: refused (one option serves the whole order), so only its presence matters. */
const FulfillmentGroups = Schema.Array(Schema.Unknown).annotations({
  description: "Not supported by this merchant: one fulfillment option serves the whole order"
})

/** Capabilities an agent declares; unknown intervention values are ignored, as the negotiation requires. */
export const RequestCapabilities = Schema.Struct({
  payment: optional(Schema.Struct({
    handlers: Schema.Array(Schema.Struct({ name: BoundedString(256) })).pipe(Schema.maxItems(32))
  })),
  interventions: optional(Schema.Struct({
    supported: optional(Schema.Array(Text(64)).pipe(Schema.maxItems(32))),
    display_context: optional(Text(64)),
    redirect_context: optional(Text(64)),
    max_redirects: optional(Schema.Int.pipe(Schema.nonNegative())),
    max_interaction_depth: optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))
  })),
  extensions: optional(Schema.Array(BoundedString(256)).pipe(Schema.maxItems(32)))
}).annotations({ identifier: "RequestCapabilities" })

const Codes = Schema.Struct({ codes: optional(DiscountsRequest.fields.codes) }).annotations({
  identifier: "DiscountsRequest"
})
const Coupons = DiscountsRequest.fields.codes.annotations({ description: "Deprecated: use discounts.codes" })

/** For the objects the protocol leaves open; the decoders ignore unknown fields of every object alike. */
const OPEN = { additionalProperties: true }

export const Metadata = Schema.Record({ key: Text(256), value: Schema.Unknown })

export const AffiliateAttribution = Schema.Struct({
  provider: BoundedString(256),
  token: optional(Text(2048)),
  publisher_id: optional(Text(256)),
  campaign_id: optional(Text(256)),
  creative_id: optional(Text(256)),
  sub_id: optional(Text(256)),
  source: optional(Schema.Struct({ type: Schema.Literal("url", "platform", "unknown"), url: optional(Text(2048)) })),
  issued_at: optional(Timestamp),
  expires_at: optional(Timestamp),
  metadata: optional(
    Schema.Record({ key: Text(256), value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
  ),
  touchpoint: optional(Schema.Literal("first", "last"))
}).annotations({ identifier: "AffiliateAttribution", jsonSchema: OPEN })

const OrderNotes = Text(5000)

export const RiskSignals = Schema.Struct({
  ip_address: optional(Text(64)),
  user_agent: optional(Text(1024)),
  accept_language: optional(Text(256)),
  session_id: optional(Text(256)),
  device_fingerprint: optional(Text(1024))
}).annotations({ identifier: "RiskSignals" })

export const MarketingConsent = Schema.Struct({ channel: BoundedString(64), opted_in: Schema.Boolean })
  .annotations({ identifier: "MarketingConsent" })

export const paymentDataOf = (version: Version2026) =>
  Schema.Struct({
    handler_id: optional(BoundedString(256)),
    instrument: optional(Schema.Struct({
      type: BoundedString(64),
      credential: Schema.Struct({ type: BoundedString(64), token: BoundedString(512) })
    })),
    billing_address: optional(addressOf(version)),
    /** The purchase-order fields are refused: no handler of this merchant takes purchase orders. */
    purchase_order_number: optional(Text(256)),
    payment_terms: optional(Schema.Literal("immediate", "net_15", "net_30", "net_60", "net_90")),
    due_date: optional(Timestamp),
    approval_required: optional(Schema.Boolean)
  }).annotations({ identifier: "PaymentData" })

/** The details some outcomes require are checked by the conversion (`line-items-requests.ts`). */
export const AuthenticationResult = Schema.Struct({
  outcome: Schema.Literal(...AUTHENTICATION_OUTCOMES),
  outcome_details: optional(Schema.Struct({
    three_ds_cryptogram: BoundedString(128, "The 3DS cryptogram (CAVV/AAV), base64"),
    electronic_commerce_indicator: Schema.Literal("01", "02", "05", "06", "07"),
    transaction_id: BoundedString(128, "The directory server's transaction id (3DS2)"),
    version: BoundedString(16, "The 3-D Secure version")
  }))
}).annotations({ identifier: "AuthenticationResult" })

const IntentTrace = Schema.Struct({
  /** Extensible: a value outside the list is kept as `other`. */
  reason_code: BoundedString(64),
  trace_summary: optional(Text(500)),
  metadata: optional(
    Schema.Record({ key: Text(256), value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
  )
}).annotations({ identifier: "IntentTrace", jsonSchema: OPEN })

const requestFields = (version: Version2026) => {
  const Buyer = buyerOf(version)
  const FulfillmentDetails = fulfillmentDetailsOf(version)
  const RequestItems = itemsOf(version)
  return {
    create: {
      line_items: RequestItems.pipe(Schema.minItems(1, { message: () => "must contain at least 1 item" })),
      currency: Schema.String,
      capabilities: RequestCapabilities,
      buyer: optional(Buyer),
      fulfillment_details: optional(FulfillmentDetails),
      fulfillment_groups: optional(FulfillmentGroups),
      affiliate_attribution: optional(AffiliateAttribution),
      coupons: optional(Coupons),
      discounts: optional(Codes),
      locale: optional(Text(35)),
      timezone: optional(Text(64)),
      quote_id: optional(Text(256)),
      metadata: optional(Metadata)
    },
    update: {
      buyer: optional(Buyer),
      line_items: optional(RequestItems),
      fulfillment_details: optional(FulfillmentDetails),
      fulfillment_groups: optional(FulfillmentGroups),
      selected_fulfillment_options: optional(Schema.Array(SelectedFulfillmentOption).pipe(Schema.maxItems(MAX_ITEMS))),
      coupons: optional(Coupons),
      discounts: optional(Codes)
    },
    complete: {
      payment_data: paymentDataOf(version),
      buyer: optional(Buyer),
      authentication_result: optional(AuthenticationResult),
      affiliate_attribution: optional(AffiliateAttribution),
      risk_signals: optional(RiskSignals)
    },
    cancel: { intent_trace: optional(IntentTrace) },
    fulfillmentDetails: FulfillmentDetails
  }
}

const fields0130 = requestFields("2026-01-30")
export const requests20260130 = {
  create: Schema.Struct(fields0130.create).annotations({ identifier: "CheckoutSessionCreateRequest" }),
  update: Schema.Struct(fields0130.update).annotations({ identifier: "CheckoutSessionUpdateRequest" }),
  complete: Schema.Struct(fields0130.complete).annotations({ identifier: "CheckoutSessionCompleteRequest" }),
  cancel: Schema.Struct(fields0130.cancel).annotations({ identifier: "CancelSessionRequest", jsonSchema: OPEN })
}

const fields0417 = requestFields("2026-04-17")
/** 2026-04-17 adds order notes, marketing consents and (ahead of its release) fulfillment details on complete. */
export const requests20260417 = {
  create: Schema.Struct({ ...fields0417.create, order_notes: optional(OrderNotes) }).annotations({
    identifier: "CheckoutSessionCreateRequest"
  }),
  update: Schema.Struct({ ...fields0417.update, order_notes: optional(OrderNotes) }).annotations({
    identifier: "CheckoutSessionUpdateRequest"
  }),
  complete: Schema.Struct({
    ...fields0417.complete,
    marketing_consents: optional(Schema.Array(MarketingConsent).pipe(Schema.maxItems(32))),
    order_notes: optional(OrderNotes),
    /** Contact changes apply; an address other than the session's is refused (409). */
    fulfillment_details: optional(fields0417.fulfillmentDetails)
  }).annotations({ identifier: "CheckoutSessionCompleteRequest" }),
  cancel: Schema.Struct(fields0417.cancel).annotations({ identifier: "CancelSessionRequest", jsonSchema: OPEN })
}
