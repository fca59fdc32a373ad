/**
 * The agent platform's routes (CONTRACT §8, role `webhook_receiver`): the order-event endpoint, whose only
 * credential is its signature, so redeliveries are recognised by Request-Id or body, not by an idempotency
 * key; and the read API of what it received, for agent keys (`API_KEYS`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiHeaders, Limit } from "../../platform/http/api-headers.ts"
import { NotFoundWire, PayloadTooLargeWire, TooManyRequestsWire, UnauthorizedWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { Idempotent } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion } from "../../platform/http/security.ts"
import { optional } from "../../shared/schema-helpers.ts"
import { StorableString } from "../../shared/storable-text.ts"
import { WebhookAck, WebhookEvent } from "./webhook.ts"

const OrderPath = Schema.Struct({ order_id: StorableString })

export class WebhookReceiverGroup extends HttpApiGroup.make("webhookReceiver")
  .add(
    HttpApiEndpoint.post("orderEvents", "/agentic_checkout/webhooks/order_events")
      .setHeaders(Schema.Struct({
        "merchant-signature": optional(
          Schema.String.annotations({
            description: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + \".\" + raw body)>"
          })
        ),
        "request-id": optional(Schema.String.annotations({ description: "The event id; redeliveries repeat it" })),
        "api-version": optional(
          Schema.String.annotations({
            description: "The ACP version of the body (one of API_VERSIONS); without it the body's shape tells"
          })
        )
      }))
      .setPayload(WebhookEvent)
      .addSuccess(WebhookAck)
      .addError(UnauthorizedWire)
      .addError(PayloadTooLargeWire)
      .addError(TooManyRequestsWire)
      .annotate(
        OpenApi.Description,
        "Receives a signed order event of any served ACP version (no bearer token; API-Version optional)"
      )
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
      .setHeaders(ApiHeaders)
      .setUrlParams(Schema.Struct({ limit: optional(Limit) }))
      .addSuccess(Schema.Struct({ data: Schema.Array(ReceivedOrderSummary) }))
  )
  .add(
    HttpApiEndpoint.get("get", "/agentic_checkout/orders/:order_id")
      .setPath(OrderPath)
      .setHeaders(ApiHeaders)
      .addSuccess(ReceivedOrderView)
      .addError(NotFoundWire)
  )
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
  .annotate(OpenApi.Description, "Orders received through order-event webhooks (agent platform)")
{}

export const WebhookReceiverApi = featureApi(WebhookReceiverGroup)
export const ReceivedOrdersApi = featureApi(ReceivedOrdersGroup)
