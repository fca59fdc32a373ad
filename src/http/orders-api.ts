/**
 * Order routes (CONTRACT §8), added to `Api` in `api.ts`:
 * - `orders`: the merchant's order management (bearer + API-Version; role `checkout`);
 * - `webhookDeliveries`: the sender's outbox as the merchant sees it (bearer + API-Version;
 *   role `checkout` or `webhook_sender`);
 * - `webhookReceiver`: the order-event webhook endpoint, authenticated only by its
 *   `Merchant-Signature` (role `webhook_receiver`);
 * - `receivedOrders`: the receiver's read API (bearer + API-Version; role `webhook_receiver`).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Order, RefundRequest, ShipRequest } from "../domain/order.ts"
import { optional } from "../domain/schema-helpers.ts"
import { StorableString } from "../domain/storable-text.ts"
import { WebhookAck } from "../domain/webhook.ts"
import {
  ConflictWire,
  NotFoundWire,
  PayloadTooLargeWire,
  TooManyRequestsWire,
  UnauthorizedWire,
  UnprocessableWire
} from "./errors.ts"
import { ApiVersion, Authorization } from "./security.ts"

const MerchantHeaders = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "API version date, YYYY-MM-DD" }),
  "idempotency-key": optional(Schema.String.annotations({ description: "Makes a POST safe to retry" })),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" }))
})

const OrderPath = Schema.Struct({ order_id: StorableString })

/** A POST that moves an order: 200 with the full order; 404 unknown order; 409 not allowed now. */
const orderChange = <const Name extends string>(name: Name, action: string, description: string) =>
  HttpApiEndpoint.post(name, `/orders/:order_id/${action}`)
    .setPath(OrderPath)
    .setHeaders(MerchantHeaders)
    .addSuccess(Order)
    .addError(NotFoundWire)
    .addError(ConflictWire)
    .annotate(OpenApi.Description, description)

export class OrdersGroup extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.get("get", "/orders/:order_id")
      .setPath(OrderPath)
      .setHeaders(MerchantHeaders)
      .addSuccess(Order)
      .addError(NotFoundWire)
  )
  .add(orderChange("confirm", "confirm", "created | manual_review → confirmed"))
  .add(orderChange("hold", "hold", "created → manual_review"))
  .add(
    orderChange("ship", "ship", "confirmed → shipped, with a shipping fulfillment").setPayload(ShipRequest)
  )
  .add(orderChange("fulfill", "fulfill", "shipped → fulfilled, or confirmed → fulfilled (all digital)"))
  .add(orderChange("cancel", "cancel", "created | manual_review | confirmed → canceled"))
  .add(
    orderChange("refund", "refunds", "adds a refund; the sum of refunds never exceeds the total")
      .setPayload(RefundRequest)
      .addError(UnprocessableWire)
  )
  .middleware(ApiVersion)
  .middleware(Authorization)
  .annotate(OpenApi.Description, "Orders (merchant): read, move through their lifecycle, refund")
{}

export const DeliveryStateParam = Schema.Literal("pending", "delivered", "dead")

export const Delivery = Schema.Struct({
  id: Schema.String,
  order_id: Schema.String,
  sequence: Schema.Int,
  type: Schema.String,
  state: DeliveryStateParam,
  attempts: Schema.Int,
  next_attempt_at: Schema.String,
  first_attempt_at: Schema.NullOr(Schema.String),
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  delivered_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookDelivery" })
export type Delivery = typeof Delivery.Type

export const DeliveryList = Schema.Struct({ data: Schema.Array(Delivery) }).annotations({
  identifier: "WebhookDeliveryList"
})

export const DeliveryMetrics = Schema.Struct({
  pending: Schema.Int,
  delivered: Schema.Int,
  dead: Schema.Int
}).annotations({ identifier: "WebhookDeliveryMetrics" })

const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500))

export class WebhookDeliveriesGroup extends HttpApiGroup.make("webhookDeliveries")
  .add(
    HttpApiEndpoint.get("list", "/webhooks/deliveries")
      .setHeaders(MerchantHeaders)
      .setUrlParams(Schema.Struct({ state: optional(DeliveryStateParam), order_id: optional(StorableString), limit: optional(Limit) }))
      .addSuccess(DeliveryList)
      .annotate(OpenApi.Description, "Order-event deliveries, newest first (`?state=dead`: the dead letters)")
  )
  .add(
    HttpApiEndpoint.post("redrive", "/webhooks/deliveries/:event_id/redrive")
      .setPath(Schema.Struct({ event_id: StorableString }))
      .setHeaders(MerchantHeaders)
      .addSuccess(Delivery)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "A dead-lettered event is queued again, due now, with a fresh retry budget")
  )
  .add(
    HttpApiEndpoint.get("metrics", "/webhooks/metrics")
      .setHeaders(MerchantHeaders)
      .addSuccess(DeliveryMetrics)
      .annotate(OpenApi.Description, "Number of order events per delivery state")
  )
  .middleware(ApiVersion)
  .middleware(Authorization)
  .annotate(OpenApi.Description, "Order-event deliveries (merchant, sender side)")
{}

export class WebhookReceiverGroup extends HttpApiGroup.make("webhookReceiver")
  .add(
    HttpApiEndpoint.post("orderEvents", "/agentic_checkout/webhooks/order_events")
      .setHeaders(Schema.Struct({
        "merchant-signature": optional(
          Schema.String.annotations({ description: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + \".\" + raw body)>" })
        ),
        "request-id": optional(Schema.String.annotations({ description: "The event id; redeliveries repeat it" }))
      }))
      .setPayload(Schema.Unknown.annotations({ identifier: "WebhookEvent", description: "WebhookEvent" }))
      .addSuccess(WebhookAck)
      .addError(UnauthorizedWire)
      .addError(PayloadTooLargeWire)
      .addError(TooManyRequestsWire)
      .annotate(OpenApi.Description, "Receives a signed order event (no bearer token, no API-Version)")
  )
  .annotate(OpenApi.Description, "Order-event webhook receiver (agent platform)")
{}

export const ReceivedEventView = Schema.Struct({
  request_id: Schema.String,
  type: Schema.String,
  status: Schema.String,
  received_at: Schema.String,
  data: Schema.Unknown
}).annotations({ identifier: "ReceivedOrderEvent" })

export const ReceivedOrderView = Schema.Struct({
  order_id: Schema.String,
  status: Schema.String,
  updated_at: Schema.String,
  order: Schema.Unknown,
  events: Schema.Array(ReceivedEventView)
}).annotations({ identifier: "ReceivedOrder" })

export const ReceivedOrderSummary = Schema.Struct({
  order_id: Schema.String,
  status: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "ReceivedOrderSummary" })

export class ReceivedOrdersGroup extends HttpApiGroup.make("receivedOrders")
  .add(
    HttpApiEndpoint.get("list", "/agentic_checkout/orders")
      .setHeaders(MerchantHeaders)
      .setUrlParams(Schema.Struct({ limit: optional(Limit) }))
      .addSuccess(Schema.Struct({ data: Schema.Array(ReceivedOrderSummary) }))
  )
  .add(
    HttpApiEndpoint.get("get", "/agentic_checkout/orders/:order_id")
      .setPath(OrderPath)
      .setHeaders(MerchantHeaders)
      .addSuccess(ReceivedOrderView)
      .addError(NotFoundWire)
  )
  .middleware(ApiVersion)
  .middleware(Authorization)
  .annotate(OpenApi.Description, "Orders received through order-event webhooks (agent platform)")
{}
