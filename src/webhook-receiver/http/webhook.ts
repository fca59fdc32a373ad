/**
 * Order-event webhook resources (CONTRACT §8): the receiver's payload, acknowledgement and error object,
 * and the signature header's name. The events per ACP version are `src/orders/wire/acp/`.
 */
import { Schema } from "effect"
import { RECEIVED_ORDER_EVENT_SCHEMAS } from "../../orders/wire/acp/versions.ts"
import { optional } from "../../shared/schema-helpers.ts"

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`. */
export const MERCHANT_SIGNATURE_HEADER = "Merchant-Signature"

/** An order event of any served version; a body is read with the one member its version picks. */
export const WebhookEvent = Schema.Union(...RECEIVED_ORDER_EVENT_SCHEMAS).annotations({
  identifier: "WebhookEventAnyVersion"
})

export const WebhookErrorObject = Schema.Struct({
  type: Schema.Literal("invalid_request", "processing_error", "service_unavailable"),
  code: Schema.String,
  message: Schema.String,
  param: optional(Schema.String)
}).annotations({ identifier: "WebhookError" })
export type WebhookErrorObject = typeof WebhookErrorObject.Type

export const WebhookAck = Schema.Struct({
  received: Schema.Literal(true),
  request_id: Schema.String
}).annotations({ identifier: "WebhookAck" })
export type WebhookAck = typeof WebhookAck.Type
