/**
 * The HTTP API definition: routes, request and response schemas, and every error each route can
 * answer with its status. Handlers live beside it (`*-handlers.ts`); OpenAPI is generated from it.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CheckoutGroup } from "../checkout/checkout-api.ts"
import { DelegateGroup } from "../delegate/delegate-api.ts"
import { isReplayableStatus } from "../idempotency/idempotency.ts"
import { OrdersGroup, WebhookDeliveriesGroup } from "../orders/orders-api.ts"
import { NotFoundWire } from "../platform/http/errors.ts"
import { API_ID, withSharedErrors } from "../platform/http/feature-api.ts"
import { documentResponseHeaders } from "../platform/http/openapi-headers.ts"
import { ReceivedOrdersGroup, WebhookReceiverGroup } from "../webhooks/webhook-receiver-api.ts"
import { DiscoveryResponse } from "./discovery.ts"

export const Health = Schema.Struct({ status: Schema.Literal("ok") })
export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  storage: Schema.Literal("ok")
})

export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true })
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Readiness))
  .add(
    HttpApiEndpoint.get("wellKnown", "/.well-known/acp.json")
      .addSuccess(DiscoveryResponse)
      // Only when no role of this process serves an ACP API (the RFC: "seller does not support ACP").
      .addError(NotFoundWire)
      .annotate(
        OpenApi.Description,
        "The public discovery document (no authentication; `Cache-Control: public, max-age=3600`)"
      )
  )
  .annotate(OpenApi.Description, "Health, readiness and discovery")
{}

export class Api extends withSharedErrors(
  HttpApi.make(API_ID)
    .add(CheckoutGroup)
    .add(DelegateGroup)
    .add(SystemGroup)
    .add(OrdersGroup)
    .add(WebhookDeliveriesGroup)
    .add(WebhookReceiverGroup)
    .add(ReceivedOrdersGroup)
)
  .annotate(OpenApi.Transform, documentResponseHeaders({ isReplayableStatus }))
  .annotate(OpenApi.Title, "Agentic Checkout Service")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(
    OpenApi.Description,
    "Agentic Commerce Protocol: Checkout Session API, Delegate Payment API and order-event webhooks."
  )
{}
