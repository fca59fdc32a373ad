/**
 * Schemas of the Checkout Session API in the interface document's format ("Checkout Session API
 * resources"), the 2025-09-29 wire format (`wire/codec-2025-09-29.ts`). The domain keeps the fields
 * every version shows in these shapes; the other versions' codecs render them in their own
 * (`wire/`).
 *
 * Request schemas decode strictly (types, bounds, formats); unknown fields are ignored so that
 * newer agents can send more. Response schemas describe exactly what we send.
 */
import { Schema } from "effect"
import { Amount, BoundedString, CurrencyCode, JsonPath, optional, Timestamp } from "../shared/schema-helpers.ts"
import { Discounts, DiscountsRequest } from "./discounts.ts"

// ---------------------------------------------------------------------------------------------
// Shared resources

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

export const Email = Schema.String.pipe(
  Schema.maxLength(254, { message: () => "must be at most 254 characters" }),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an email address" })
).annotations({ identifier: "Email" })

export const Buyer = Schema.Struct({
  first_name: BoundedString(128),
  last_name: BoundedString(128),
  email: Email,
  phone_number: optional(
    Schema.String.pipe(
      Schema.pattern(/^\+?[0-9 ()\-.]{3,32}$/, { message: () => "must be a phone number" })
    )
  )
}).annotations({ identifier: "Buyer" })
export type Buyer = typeof Buyer.Type

export const MAX_QUANTITY = 10_000
export const MAX_ITEMS = 100

export const Item = Schema.Struct({
  id: BoundedString(256, "Product identifier"),
  quantity: Schema.Int.pipe(
    Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" }),
    Schema.lessThanOrEqualTo(MAX_QUANTITY, { message: () => `must be at most ${MAX_QUANTITY}` })
  )
}).annotations({ identifier: "Item" })
export type Item = typeof Item.Type

export const LineItem = Schema.Struct({
  id: Schema.String,
  item: Item,
  base_amount: Amount,
  discount: Amount,
  subtotal: Amount,
  tax: Amount,
  total: Amount
}).annotations({ identifier: "LineItem" })
export type LineItem = typeof LineItem.Type

export const TotalType = Schema.Literal(
  "items_base_amount",
  "items_discount",
  "subtotal",
  "discount",
  "fulfillment",
  "tax",
  "fee",
  "total"
)
export type TotalType = typeof TotalType.Type

export const Total = Schema.Struct({
  type: TotalType,
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "Total" })
export type Total = typeof Total.Type

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

export const ContentType = Schema.Literal("plain", "markdown")

export const MessageInfo = Schema.Struct({
  type: Schema.Literal("info"),
  param: optional(JsonPath),
  content_type: ContentType,
  content: Schema.String
}).annotations({ identifier: "MessageInfo" })
export type MessageInfo = typeof MessageInfo.Type

export const MessageErrorCode = Schema.Literal(
  "missing",
  "invalid",
  "out_of_stock",
  "payment_declined",
  "requires_sign_in",
  "requires_3ds",
  /** The merchant requires an intervention (3-D Secure) the agent did not declare it can handle. */
  "intervention_required"
)
export type MessageErrorCode = typeof MessageErrorCode.Type

export const MessageError = Schema.Struct({
  type: Schema.Literal("error"),
  code: MessageErrorCode,
  param: optional(JsonPath),
  content_type: ContentType,
  content: Schema.String
}).annotations({ identifier: "MessageError" })
export type MessageError = typeof MessageError.Type

export const Message = Schema.Union(MessageInfo, MessageError)
export type Message = typeof Message.Type

export const LinkType = Schema.Literal("terms_of_use", "privacy_policy", "seller_shop_policies")
export const Link = Schema.Struct({
  type: LinkType,
  url: Schema.String
}).annotations({ identifier: "Link" })
export type Link = typeof Link.Type

/**
 * The order as the complete response shows it (the interface document's checkout-API `Order`,
 * hence its OpenAPI name); the full order is `Order` in `src/orders/order-schemas.ts`.
 */
export const OrderSummary = Schema.Struct({
  id: Schema.String,
  checkout_session_id: Schema.String,
  permalink_url: Schema.String
}).annotations({ identifier: "Order" })
export type OrderSummary = typeof OrderSummary.Type

// ---------------------------------------------------------------------------------------------
// Capabilities

export const PaymentHandler = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  spec: Schema.String,
  requires_delegate_payment: Schema.Boolean,
  requires_pci_compliance: Schema.Boolean,
  psp: Schema.String,
  config_schema: Schema.String,
  instrument_schemas: Schema.Array(Schema.String),
  config: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "PaymentHandler" })
export type PaymentHandler = typeof PaymentHandler.Type

export const Payment = Schema.Struct({
  handlers: Schema.Array(PaymentHandler)
}).annotations({ identifier: "Payment" })

export const InterventionCapabilities = Schema.Struct({
  supported: Schema.Array(Schema.String),
  required: optional(Schema.Array(Schema.String)),
  enforcement: optional(Schema.String),
  display_context: optional(Schema.String),
  redirect_context: optional(Schema.String),
  max_redirects: optional(Schema.Int),
  max_interaction_depth: optional(Schema.Int)
}).annotations({ identifier: "InterventionCapabilities" })
export type InterventionCapabilities = typeof InterventionCapabilities.Type

export const ExtensionDeclaration = Schema.Struct({
  name: Schema.String,
  extends: Schema.Array(Schema.String),
  schema: optional(Schema.String),
  spec: optional(Schema.String)
}).annotations({ identifier: "ExtensionDeclaration" })
export type ExtensionDeclaration = typeof ExtensionDeclaration.Type

export const Capabilities = Schema.Struct({
  payment: optional(Payment),
  interventions: optional(InterventionCapabilities),
  extensions: optional(Schema.Array(ExtensionDeclaration))
}).annotations({ identifier: "Capabilities" })
export type Capabilities = typeof Capabilities.Type

/** What an agent may declare about itself on create; every part optional, unknown values ignored. */
export const AgentCapabilities = Schema.Struct({
  interventions: optional(
    Schema.Struct({
      supported: optional(Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(32)))
    })
  )
}).annotations({ identifier: "AgentCapabilities" })
export type AgentCapabilities = typeof AgentCapabilities.Type

// ---------------------------------------------------------------------------------------------
// Payment data (both shapes)

export const PaymentCredential = Schema.Struct({
  type: BoundedString(64),
  token: BoundedString(512)
}).annotations({ identifier: "PaymentCredential" })

export const PaymentInstrument = Schema.Struct({
  type: BoundedString(64),
  credential: PaymentCredential
}).annotations({ identifier: "PaymentInstrument" })

export const HandlerPaymentData = Schema.Struct({
  handler_id: BoundedString(256),
  instrument: PaymentInstrument,
  billing_address: optional(Address),
  purchase_order_number: optional(Schema.String.pipe(Schema.maxLength(256))),
  payment_terms: optional(Schema.String.pipe(Schema.maxLength(256))),
  due_date: optional(Schema.String.pipe(Schema.maxLength(64))),
  approval_required: optional(Schema.Boolean)
}).annotations({ identifier: "HandlerPaymentData" })
export type HandlerPaymentData = typeof HandlerPaymentData.Type

/**
 * The legacy shape never carries a key of the handler shape: a body with `handler_id` or
 * `instrument` means the handler shape, and is refused when that shape is broken rather than paid
 * with the legacy token beside it.
 */
export const LegacyPaymentData = Schema.Struct({
  token: BoundedString(512),
  provider: BoundedString(64),
  billing_address: optional(Address),
  handler_id: optional(Schema.Never),
  instrument: optional(Schema.Never)
}).annotations({ identifier: "LegacyPaymentData" })
export type LegacyPaymentData = typeof LegacyPaymentData.Type

export const PaymentData = Schema.Union(HandlerPaymentData, LegacyPaymentData).annotations({
  identifier: "PaymentData"
})
export type PaymentData = typeof PaymentData.Type

// ---------------------------------------------------------------------------------------------
// Sessions

export const SessionStatus = Schema.Literal(
  "not_ready_for_payment",
  "ready_for_payment",
  "authentication_required",
  "completed",
  "canceled",
  "expired"
)
export type SessionStatus = typeof SessionStatus.Type

const sessionFields = {
  id: Schema.String,
  status: SessionStatus,
  currency: CurrencyCode,
  line_items: Schema.Array(LineItem),
  fulfillment_options: Schema.Array(FulfillmentOption),
  totals: Schema.Array(Total),
  messages: Schema.Array(Message),
  links: Schema.Array(Link)
}

export const CheckoutSession = Schema.Struct({
  ...sessionFields,
  buyer: optional(Buyer),
  capabilities: Capabilities,
  fulfillment_address: optional(Address),
  fulfillment_option_id: optional(Schema.String),
  /** The discount extension (`dev.proto.discount`): present when the catalog has coupons or codes were sent. */
  discounts: optional(Discounts),
  created_at: Timestamp,
  updated_at: Timestamp,
  expires_at: Timestamp
}).annotations({ identifier: "CheckoutSession" })
export type CheckoutSession = typeof CheckoutSession.Type

export const CheckoutSessionWithOrder = Schema.Struct({
  ...CheckoutSession.fields,
  order: OrderSummary
}).annotations({ identifier: "CheckoutSessionWithOrder" })
export type CheckoutSessionWithOrder = typeof CheckoutSessionWithOrder.Type

export const CheckoutSessionCreateRequest = Schema.Struct({
  items: Schema.Array(Item).pipe(
    Schema.minItems(1, { message: () => "must contain at least 1 item" }),
    Schema.maxItems(MAX_ITEMS, { message: () => `must contain at most ${MAX_ITEMS} items` })
  ),
  buyer: optional(Buyer),
  fulfillment_address: optional(Address),
  capabilities: optional(AgentCapabilities),
  discounts: optional(DiscountsRequest)
}).annotations({ identifier: "CheckoutSessionCreateRequest" })
export type CheckoutSessionCreateRequest = typeof CheckoutSessionCreateRequest.Type

export const CheckoutSessionUpdateRequest = Schema.Struct({
  /** Replaces the whole list; `[]` empties the cart (the session is then not ready for payment). */
  items: optional(
    Schema.Array(Item).pipe(
      Schema.maxItems(MAX_ITEMS, { message: () => `must contain at most ${MAX_ITEMS} items` })
    )
  ),
  buyer: optional(Buyer),
  fulfillment_address: optional(Address),
  fulfillment_option_id: optional(BoundedString(256)),
  /** Replaces the codes; `[]` clears them; absent keeps them. */
  discounts: optional(DiscountsRequest)
}).annotations({ identifier: "CheckoutSessionUpdateRequest" })
export type CheckoutSessionUpdateRequest = typeof CheckoutSessionUpdateRequest.Type

export const CheckoutSessionCompleteRequest = Schema.Struct({
  buyer: optional(Buyer),
  payment_data: PaymentData
}).annotations({ identifier: "CheckoutSessionCompleteRequest" })
export type CheckoutSessionCompleteRequest = typeof CheckoutSessionCompleteRequest.Type
