/**
 * The Checkout Session API in the interface document's format (2025-09-29), the shapes the domain
 * keeps. Requests decode strictly but ignore unknown fields, so that newer agents can send more.
 */
import { Schema } from "effect"
import { ExtensionDeclaration, InterventionCapabilities, Link, PaymentHandler } from "../../catalog/model/catalog.ts"
import { Address, FulfillmentOption } from "../../catalog/model/fulfillment.ts"
import { Item, LineItem, MAX_ITEMS, Total } from "../../catalog/model/line-items.ts"
import { OrderSummary } from "../../orders/model/order.ts"
import { BoundedString, CurrencyCode, JsonPath, optional, Timestamp } from "../../shared/schema-helpers.ts"
import { Discounts, DiscountsRequest } from "../pricing/discounts.ts"

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

export const Payment = Schema.Struct({
  handlers: Schema.Array(PaymentHandler)
}).annotations({ identifier: "Payment" })

export const Capabilities = Schema.Struct({
  payment: optional(Payment),
  interventions: optional(InterventionCapabilities),
  extensions: optional(Schema.Array(ExtensionDeclaration))
}).annotations({ identifier: "Capabilities" })
export type Capabilities = typeof Capabilities.Type

export const AgentCapabilities = Schema.Struct({
  interventions: optional(
    Schema.Struct({
      supported: optional(Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(32)))
    })
  )
}).annotations({ identifier: "AgentCapabilities" })
export type AgentCapabilities = typeof AgentCapabilities.Type

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

/** A body with a key of the handler shape is of that shape: refused if broken, never paid with a legacy token. */
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
  /** Present when the catalog has coupons or codes were sent. */
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
  /** Replaces the whole list. */
  items: optional(
    Schema.Array(Item).pipe(
      Schema.maxItems(MAX_ITEMS, { message: () => `must contain at most ${MAX_ITEMS} items` })
    )
  ),
  buyer: optional(Buyer),
  fulfillment_address: optional(Address),
  fulfillment_option_id: optional(BoundedString(256)),
  discounts: optional(DiscountsRequest)
}).annotations({ identifier: "CheckoutSessionUpdateRequest" })
export type CheckoutSessionUpdateRequest = typeof CheckoutSessionUpdateRequest.Type

export const CheckoutSessionCompleteRequest = Schema.Struct({
  buyer: optional(Buyer),
  payment_data: PaymentData
}).annotations({ identifier: "CheckoutSessionCompleteRequest" })
export type CheckoutSessionCompleteRequest = typeof CheckoutSessionCompleteRequest.Type
