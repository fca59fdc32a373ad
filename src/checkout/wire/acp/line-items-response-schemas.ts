/** Response schemas of the line-items format: exactly what `line-items-responses.ts` sends. */
import { Schema } from "effect"
import { ExtensionDeclaration, PaymentHandler } from "../../../catalog/model/catalog.ts"
import { TOTAL_TYPES_20260130 } from "../../../catalog/model/line-items.ts"
import { isAtLeast } from "../../../shared/api-versions.ts"
import { Amount, CurrencyCode, JsonPath, optional, Timestamp } from "../../../shared/schema-helpers.ts"
import { AppliedDiscount, RejectedDiscount } from "../../pricing/discounts.ts"
import { ContentType, MessageErrorCode } from "../../session/schemas.ts"
import {
  buyerOf,
  fulfillmentDetailsOf,
  Metadata,
  SelectedFulfillmentOption,
  type Version2026
} from "./line-items-request-schemas.ts"

/** A session's totals (the types of 2026-01-30, which 2026-04-17 extends). */
export const Total = Schema.Struct({
  type: Schema.Literal(...TOTAL_TYPES_20260130),
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "Total" })
export type Total = typeof Total.Type

export const LineItem = Schema.Struct({
  id: Schema.String,
  item: Schema.Struct({ id: Schema.String }),
  quantity: Schema.Int,
  unit_amount: Amount,
  totals: Schema.Array(Total)
}).annotations({ identifier: "LineItem" })

const optionFields = {
  id: Schema.String,
  title: Schema.String,
  description: optional(Schema.String),
  totals: Schema.Array(Total)
}

export const FulfillmentOption = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("shipping"),
    ...optionFields,
    carrier: optional(Schema.String),
    earliest_delivery_time: optional(Timestamp),
    latest_delivery_time: optional(Timestamp)
  }).annotations({ identifier: "FulfillmentOptionShipping" }),
  Schema.Struct({ type: Schema.Literal("digital"), ...optionFields }).annotations({
    identifier: "FulfillmentOptionDigital"
  })
)

/** Messages as sent (both versions; the optional `severity` and `resolution` are never set). */
const Message = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("info"),
    param: optional(JsonPath),
    content_type: ContentType,
    content: Schema.String
  }).annotations({ identifier: "MessageInfo" }),
  Schema.Struct({
    type: Schema.Literal("warning"),
    code: Schema.Literal(
      "low_stock",
      "high_demand",
      "shipping_delay",
      "price_change",
      "expiring_promotion",
      "limited_availability",
      "discount_code_expired",
      "discount_code_invalid",
      "discount_code_already_applied",
      "discount_code_combination_disallowed",
      "discount_code_minimum_not_met",
      "discount_code_user_not_logged_in",
      "discount_code_user_ineligible",
      "discount_code_usage_limit_reached"
    ),
    param: optional(JsonPath),
    content_type: ContentType,
    content: Schema.String
  }).annotations({ identifier: "MessageWarning" }),
  Schema.Struct({
    type: Schema.Literal("error"),
    code: MessageErrorCode,
    param: optional(JsonPath),
    content_type: ContentType,
    content: Schema.String
  }).annotations({ identifier: "MessageError" })
)

export const Link = Schema.Struct({
  type: Schema.Literal(
    "terms_of_use",
    "privacy_policy",
    "return_policy",
    "shipping_policy",
    "contact_us",
    "about_us",
    "faq",
    "support"
  ),
  url: Schema.String
}).annotations({ identifier: "Link" })

export const ResponseCapabilities = Schema.Struct({
  payment: Schema.Struct({ handlers: Schema.Array(PaymentHandler) }),
  interventions: optional(Schema.Struct({
    supported: Schema.Array(Schema.String),
    required: optional(Schema.Array(Schema.String)),
    enforcement: optional(Schema.String)
  })),
  extensions: optional(Schema.Array(ExtensionDeclaration))
}).annotations({ identifier: "Capabilities" })

const maxLength = (max: number) => Schema.String.pipe(Schema.maxLength(max))

/** The browser channel of a 3DS authentication (2026-01-30 requires it in the metadata). */
const BrowserChannel = Schema.Struct({
  type: Schema.Literal("browser"),
  browser: Schema.Struct({
    accept_header: Schema.String,
    ip_address: maxLength(45),
    javascript_enabled: Schema.Boolean,
    language: maxLength(35),
    user_agent: Schema.String
  })
}).annotations({ identifier: "BrowserChannel" })

/** What the agent authenticates with while the session is `authentication_required`. */
export const authenticationMetadataOf = (version: Version2026) =>
  Schema.Struct({
    ...(isAtLeast(version, "2026-04-17") ? {} : { channel: BrowserChannel }),
    acquirer_details: Schema.Struct({
      acquirer_bin: maxLength(11),
      acquirer_country: Schema.String.pipe(Schema.length(2)),
      acquirer_merchant_id: maxLength(35),
      merchant_name: maxLength(40),
      requestor_id: optional(maxLength(35))
    }),
    directory_server: Schema.Literal("american_express", "mastercard", "visa"),
    flow_preference: optional(Schema.Struct({
      type: Schema.Literal("challenge", "frictionless"),
      challenge: optional(Schema.Struct({ type: optional(Schema.Literal("mandated", "preferred")) })),
      frictionless: optional(Schema.Struct({ type: optional(Schema.Literal("low_risk")) }))
    }))
  }).annotations({ identifier: "AuthenticationMetadata" })

export const responseSchemasOf = (version: Version2026) => {
  const since0417 = isAtLeast(version, "2026-04-17")
  const session = Schema.Struct({
    id: Schema.String,
    protocol: Schema.Struct({ version: Schema.Literal(version) }),
    capabilities: ResponseCapabilities,
    status: Schema.Literal(
      "not_ready_for_payment",
      "ready_for_payment",
      "authentication_required",
      "completed",
      "canceled",
      "expired"
    ),
    currency: CurrencyCode,
    line_items: Schema.Array(LineItem),
    fulfillment_options: Schema.Array(FulfillmentOption),
    totals: Schema.Array(Total),
    messages: Schema.Array(Message),
    links: Schema.Array(Link),
    buyer: optional(buyerOf(version)),
    fulfillment_details: optional(fulfillmentDetailsOf(version)),
    selected_fulfillment_options: optional(Schema.Array(SelectedFulfillmentOption)),
    locale: optional(Schema.String),
    timezone: optional(Schema.String),
    metadata: optional(Metadata),
    authentication_metadata: optional(authenticationMetadataOf(version)),
    discounts: optional(
      Schema.Struct({
        codes: Schema.Array(Schema.String),
        applied: Schema.Array(AppliedDiscount),
        rejected: Schema.Array(RejectedDiscount)
      }).annotations({ identifier: "DiscountsResponse" })
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
    expires_at: Timestamp
  }).annotations({ identifier: "CheckoutSession" })
  const orderFields = { id: Schema.String, checkout_session_id: Schema.String, permalink_url: Schema.String }
  const order = Schema.Struct(orderFields).annotations({ identifier: "Order" })
  const order0417 = Schema.Struct({
    ...orderFields,
    type: Schema.Literal("order"),
    confirmation: optional(Schema.Struct({ order_notes: Schema.String }))
  }).annotations({ identifier: "Order" })
  const sessionWithOrder = since0417
    ? Schema.Struct({ ...session.fields, order: order0417 })
    : Schema.Struct({ ...session.fields, order })
  /** Complete answers the completed session, or the session waiting for issuer authentication. */
  const authenticationRequired = Schema.Struct({
    ...session.fields,
    status: Schema.Literal("authentication_required"),
    authentication_metadata: authenticationMetadataOf(version)
  }).annotations({ identifier: "CheckoutSessionAuthenticationRequired" })
  const withOrder = sessionWithOrder.annotations({ identifier: "CheckoutSessionWithOrder" })
  return { session, sessionWithOrder: withOrder, completeResponse: Schema.Union(withOrder, authenticationRequired) }
}
