/**
 * Order routes (CONTRACT §8): the merchant's order management (role `checkout`) and the sender's outbox
 * (role `checkout` or `webhook_sender`), for merchant keys only (`MERCHANT_API_KEYS`): an agent key gets 403, so
 * no agent platform moves an order or its money. The agent platform's receiver is `src/webhook-receiver/`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiHeaders, Limit } from "../../platform/http/api-headers.ts"
import { ConflictWire, NotFoundWire, UnprocessableWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { Idempotent } from "../../platform/http/route-declarations.ts"
import { ApiVersion, MerchantAuthorization } from "../../platform/http/security.ts"
import { optional } from "../../shared/schema-helpers.ts"
import { StorableString } from "../../shared/storable-text.ts"
import { Order, RefundRequest, ShipRequest } from "../model/order.ts"

const OrderPath = Schema.Struct({ order_id: StorableString })

/** A POST that moves an order: 200 with the full order; 404 unknown order; 409 not allowed now. */
const orderChange = <const Name extends string>(name: Name, action: string, description: string) =>
  HttpApiEndpoint.post(name, `/orders/:order_id/${action}`)
    .setPath(OrderPath)
    .setHeaders(ApiHeaders)
    .addSuccess(Order)
    .addError(NotFoundWire)
    .addError(ConflictWire)
    .annotate(OpenApi.Description, description)

export class OrdersGroup extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.get("get", "/orders/:order_id")
      .setPath(OrderPath)
      .setHeaders(ApiHeaders)
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
  .middleware(MerchantAuthorization)
  .annotate(Idempotent, true)
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

export class WebhookDeliveriesGroup extends HttpApiGroup.make("webhookDeliveries")
  .add(
    HttpApiEndpoint.get("list", "/webhooks/deliveries")
      .setHeaders(ApiHeaders)
      .setUrlParams(
        Schema.Struct({
          state: optional(DeliveryStateParam),
          order_id: optional(StorableString),
          limit: optional(Limit)
        })
      )
      .addSuccess(DeliveryList)
      .annotate(OpenApi.Description, "Order-event deliveries, newest first (`?state=dead`: the dead letters)")
  )
  .add(
    HttpApiEndpoint.post("redrive", "/webhooks/deliveries/:event_id/redrive")
      .setPath(Schema.Struct({ event_id: StorableString }))
      .setHeaders(ApiHeaders)
      .addSuccess(Delivery)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "A dead-lettered event is queued again, due now, with a fresh retry budget")
  )
  .add(
    HttpApiEndpoint.get("metrics", "/webhooks/metrics")
      .setHeaders(ApiHeaders)
      .addSuccess(DeliveryMetrics)
      .annotate(OpenApi.Description, "Number of order events per delivery state")
  )
  .middleware(ApiVersion)
  .middleware(MerchantAuthorization)
  .annotate(Idempotent, true)
  .annotate(OpenApi.Description, "Order-event deliveries (merchant, sender side)")
{}

export const OrdersApi = featureApi(OrdersGroup)
export const WebhookDeliveriesApi = featureApi(WebhookDeliveriesGroup)
