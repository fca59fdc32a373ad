/**
 * The HTTP API definition: routes, request and response schemas, and every error each route can
 * answer with its status. Handlers live beside it (`*-handlers.ts`); OpenAPI is generated from it.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CheckoutSession,
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  CheckoutSessionWithOrder
} from "../domain/checkout.ts"
import { optional } from "../domain/schema-helpers.ts"
import { StorableString } from "../domain/storable-text.ts"
import {
  BadRequestWire,
  ConflictWire,
  InternalErrorWire,
  MethodNotAllowedWire,
  NotFoundWire,
  PayloadTooLargeWire,
  PaymentRequiredWire,
  ServiceUnavailableWire,
  TooManyRequestsWire,
  UnprocessableWire
} from "./errors.ts"
import { documentResponseHeaders } from "./openapi-headers.ts"
import { RequestSignature } from "./request-signature.ts"
import { OrdersGroup, ReceivedOrdersGroup, WebhookDeliveriesGroup, WebhookReceiverGroup } from "./orders-api.ts"
import { ApiVersion, Authorization } from "./security.ts"
import { DelegateGroup } from "./delegate-api.ts"

/** Headers of checkout requests, for the documentation (the middleware enforces API-Version). */
export const CheckoutHeaders = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "API version date, YYYY-MM-DD" }),
  "idempotency-key": optional(Schema.String.annotations({ description: "Makes a POST safe to retry" })),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" }))
})

const SessionPath = Schema.Struct({ checkout_session_id: StorableString })

export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.post("create", "/checkout_sessions")
      .setHeaders(CheckoutHeaders)
      .setPayload(CheckoutSessionCreateRequest)
      .addSuccess(CheckoutSession, { status: 201 })
      .addError(UnprocessableWire)
      .addError(ConflictWire)
      .addError(TooManyRequestsWire)
  )
  .add(
    HttpApiEndpoint.get("get", "/checkout_sessions/:checkout_session_id")
      .setPath(SessionPath)
      .setHeaders(CheckoutHeaders)
      .addSuccess(CheckoutSession)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.post("update", "/checkout_sessions/:checkout_session_id")
      .setPath(SessionPath)
      .setHeaders(CheckoutHeaders)
      .setPayload(CheckoutSessionUpdateRequest)
      .addSuccess(CheckoutSession)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .addError(TooManyRequestsWire)
  )
  .add(
    HttpApiEndpoint.post("complete", "/checkout_sessions/:checkout_session_id/complete")
      .setPath(SessionPath)
      .setHeaders(CheckoutHeaders)
      .setPayload(CheckoutSessionCompleteRequest)
      .addSuccess(CheckoutSessionWithOrder)
      .addError(PaymentRequiredWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/checkout_sessions/:checkout_session_id/cancel")
      .setPath(SessionPath)
      .setHeaders(CheckoutHeaders)
      .addSuccess(CheckoutSession)
      .addError(NotFoundWire)
      .addError(MethodNotAllowedWire)
      .addError(ConflictWire)
  )
  // The last added runs first: Authorization, then API-Version, then the request signature.
  .middleware(RequestSignature)
  .middleware(ApiVersion)
  .middleware(Authorization)
  .annotate(OpenApi.Description, "Checkout Session API (merchant)")
{}

export const Health = Schema.Struct({ status: Schema.Literal("ok") })
export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  storage: Schema.Literal("ok")
})
export const WellKnown = Schema.Struct({
  protocol: Schema.Literal("acp"),
  supported_versions: Schema.Array(Schema.String),
  roles: Schema.Array(Schema.String),
  merchant_id: Schema.String
}).annotations({ identifier: "AcpDiscovery" })

export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true })
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Readiness))
  .add(HttpApiEndpoint.get("wellKnown", "/.well-known/acp.json").addSuccess(WellKnown))
  .annotate(OpenApi.Description, "Health, readiness and discovery")
{}

export class Api extends HttpApi.make("agentic-checkout")
  .add(CheckoutGroup)
  .add(DelegateGroup)
  .add(SystemGroup)
  .add(OrdersGroup)
  .add(WebhookDeliveriesGroup)
  .add(WebhookReceiverGroup)
  .add(ReceivedOrdersGroup)
  // 401 is declared by the groups that authenticate (their middleware's failure, or the webhook
  // receiver's signature check), so the open system routes do not list it.
  .addError(BadRequestWire)
  .addError(PayloadTooLargeWire)
  .addError(InternalErrorWire)
  .addError(ServiceUnavailableWire)
  .annotate(OpenApi.Transform, documentResponseHeaders)
  .annotate(OpenApi.Title, "Agentic Checkout Service")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(
    OpenApi.Description,
    "Agentic Commerce Protocol: Checkout Session API, Delegate Payment API and order-event webhooks."
  )
{}
