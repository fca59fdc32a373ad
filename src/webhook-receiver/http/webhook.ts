/**
 * Order-event webhook resources (interface document "Webhook resources", "Order event webhook";
 * CONTRACT §8): the receiver's payload, acknowledgement and error object, and the signature
 * header's name. The events themselves, per ACP version, are `src/orders/order-event-wire/`;
 * signing is `src/shared/hmac-signature.ts`, the receiver's body validation `./webhook-body.ts`,
 * the sender's retry policy `../../orders/model/delivery-retry.ts`.
 */
import { Schema } from "effect"
import { RECEIVED_ORDER_EVENT_SCHEMAS } from "../../orders/wire/acp/versions.ts"
import { optional } from "../../shared/schema-helpers.ts"

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`. */
export const MERCHANT_SIGNATURE_HEADER = "Merchant-Signature"

/**
 * The receiver's payload: an order event of any served version. The receiver reads a body with
 * the one member its version picks (`orders/wire/acp/versions.ts`: the API-Version header, else the shape).
 */
export const WebhookEvent = Schema.Union(...RECEIVED_ORDER_EVENT_SCHEMAS).annotations({
  identifier: "WebhookEventAnyVersion"
})

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
