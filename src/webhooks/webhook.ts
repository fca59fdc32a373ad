/**
 * Order-event webhook resources (interface document "Webhook resources", "Order event webhook";
 * CONTRACT §8): the events as sent and as received, the receiver's acknowledgement and error
 * object, and the signature header's name. Signing is `src/shared/hmac-signature.ts`, the
 * receiver's body validation `./webhook-body.ts`, the sender's retry policy `./delivery-retry.ts`.
 */
import { Schema } from "effect"
import { Order } from "../orders/order-schemas.ts"
import { Amount, optional } from "../shared/schema-helpers.ts"

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`. */
export const MERCHANT_SIGNATURE_HEADER = "Merchant-Signature"

export const WebhookEventType = Schema.Literal("order_create", "order_update")
export type WebhookEventType = typeof WebhookEventType.Type

export const WebhookRefund = Schema.Struct({
  type: Schema.Literal("store_credit", "original_payment"),
  amount: Amount
}).annotations({ identifier: "WebhookRefund" })
export type WebhookRefund = typeof WebhookRefund.Type

const boundedString = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/** Any JSON object: the elements of line_items, fulfillments and adjustments are kept as sent. */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "WebhookJsonObject",
  description: "an object"
})

export const ReceivedTotal = Schema.Struct({
  type: boundedString(64),
  display_text: boundedString(256),
  amount: Schema.Int
}).annotations({ identifier: "ReceivedTotal" })
export type ReceivedTotal = typeof ReceivedTotal.Type

/**
 * EventDataOrder as the receiver decodes it. `status` is any string (unknown statuses are
 * accepted and kept); the optional arrays are kept as sent, only their element shape is checked
 * loosely (objects; totals `{type, display_text, amount}`).
 */
export const EventDataOrder = Schema.Struct({
  type: Schema.Literal("order"),
  id: optional(boundedString(256)),
  checkout_session_id: boundedString(256),
  permalink_url: boundedString(2048),
  status: boundedString(64),
  refunds: Schema.Array(WebhookRefund),
  line_items: optional(Schema.Array(JsonObject)),
  fulfillments: optional(Schema.Array(JsonObject)),
  adjustments: optional(Schema.Array(JsonObject)),
  totals: optional(Schema.Array(ReceivedTotal))
}).annotations({ identifier: "EventDataOrder" })
export type EventDataOrder = typeof EventDataOrder.Type

/** The event as received (lenient status). Unknown fields are ignored. */
export const WebhookEvent = Schema.Struct({
  type: WebhookEventType,
  data: EventDataOrder
}).annotations({ identifier: "WebhookEvent" })
export type WebhookEvent = typeof WebhookEvent.Type

/** The event as sent: the full order with the known status enum. */
export const OutgoingWebhookEvent = Schema.Struct({
  type: WebhookEventType,
  data: Order
}).annotations({ identifier: "OutgoingWebhookEvent" })
export type OutgoingWebhookEvent = typeof OutgoingWebhookEvent.Type

export const makeOrderEvent = (type: WebhookEventType, order: Order): OutgoingWebhookEvent => ({ type, data: order })

/** Webhook error object of the interface document. */
export const WebhookErrorObject = Schema.Struct({
  type: Schema.Literal("invalid_request", "processing_error", "service_unavailable"),
  code: Schema.String,
  message: Schema.String,
  param: optional(Schema.String)
}).annotations({ identifier: "WebhookError" })
export type WebhookErrorObject = typeof WebhookErrorObject.Type

/** 200 body of the receiver (CONTRACT §8). */
export const WebhookAck = Schema.Struct({
  received: Schema.Literal(true),
  request_id: Schema.String
}).annotations({ identifier: "WebhookAck" })
export type WebhookAck = typeof WebhookAck.Type
