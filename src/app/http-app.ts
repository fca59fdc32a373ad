/** The whole HTTP application as one `HttpApp`: routes, documentation, middleware; tests call it directly. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Layer } from "effect"
import { CartsHandlers } from "../carts/http/handlers.ts"
import { CartPageHandlers } from "../carts/http/handoff-handlers.ts"
import { ProductsHandlers } from "../catalog/http/handlers.ts"
import { CheckoutHandlers } from "../checkout/http/handlers.ts"
import { ConsoleAccessLive } from "../console/http/access-middleware.ts"
import { ConsoleHandlers } from "../console/http/handlers.ts"
import { AcsHandlers } from "../delegate-authentication/http/acs-pages.ts"
import {
  AuthenticationMiddlewareLive,
  DelegateAuthenticationHandlers
} from "../delegate-authentication/http/handlers.ts"
import { DelegateHandlers, DelegateMiddlewareLive } from "../delegate-payment/http/handlers.ts"
import { FeedApiVersionLive, FeedsHandlers } from "../feeds/http/handlers.ts"
import { FeedPublicationHandlers } from "../feeds/http/publication-handlers.ts"
import { makeIdempotencyMiddleware } from "../idempotency/http/middleware.ts"
import { makeMcpEndpoint, MCP_PATH } from "../mcp/http/handlers.ts"
import { OrdersHandlers, WebhookDeliveriesHandlers } from "../orders/http/handlers.ts"
import { OrderPageHandlers } from "../orders/http/order-page-handlers.ts"
import { AppConfig } from "../platform/config.ts"
import { decodeErrorMiddleware, requestMiddleware } from "../platform/http/middleware.ts"
import { RequestSignatureLive } from "../platform/http/request-signature.ts"
import { MAX_PARAM_LENGTH } from "../platform/http/route-table.ts"
import { ApiVersionLive, AuthorizationLive } from "../platform/http/security.ts"
import { StripeWebhooksHandlers } from "../stripe/http/handlers.ts"
import { UcpCheckoutHandlers } from "../ucp/http/checkout-handlers.ts"
import { UcpDiscoveryHandlers } from "../ucp/http/discovery-handlers.ts"
import { withUcpErrorShape } from "../ucp/http/error-shape.ts"
import { ReceivedOrdersHandlers, WebhookReceiverHandlers } from "../webhook-receiver/http/handlers.ts"
import { Api } from "./api.ts"
import { documentationRoutes, DocumentationRoutesLive } from "./openapi-documents.ts"
import { SystemHandlers } from "./system-handlers.ts"

export class HttpAppService extends Context.Tag("acp/HttpApp")<
  HttpAppService,
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>
>() {}

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    CheckoutHandlers,
    SystemHandlers,
    DelegateHandlers,
    OrdersHandlers,
    WebhookDeliveriesHandlers,
    WebhookReceiverHandlers,
    ReceivedOrdersHandlers,
    DelegateAuthenticationHandlers,
    AcsHandlers,
    OrderPageHandlers,
    ConsoleHandlers,
    StripeWebhooksHandlers,
    ProductsHandlers,
    FeedsHandlers,
    FeedPublicationHandlers,
    CartsHandlers,
    CartPageHandlers,
    UcpCheckoutHandlers,
    UcpDiscoveryHandlers
  ]),
  Layer.provide([
    AuthorizationLive,
    ApiVersionLive,
    RequestSignatureLive,
    DelegateMiddlewareLive,
    AuthenticationMiddlewareLive,
    ConsoleAccessLive,
    FeedApiVersionLive
  ])
)

const RoutesLive = Layer.mergeAll(
  decodeErrorMiddleware(Api),
  DocumentationRoutesLive
).pipe(Layer.provideMerge(ApiLive))

/**
 * Paths match exactly as written: otherwise one request would have several spellings, each its own
 * idempotency scope (CONTRACT §6). Percent-encoding is decoded; that scope canonicalizes it (`canonicalPath`).
 */
const strictRouting = {
  caseSensitive: true,
  ignoreTrailingSlash: false,
  ignoreDuplicateSlashes: false,
  maxParamLength: MAX_PARAM_LENGTH
}

/** Idempotency inside `requestMiddleware`, so a replay still gets its own Request-Id and access log line. */
const httpAppWithMiddleware = Effect.gen(function*() {
  const app = yield* HttpApiBuilder.httpApp.pipe(HttpRouter.withRouterConfig(strictRouting))
  const idempotency = yield* makeIdempotencyMiddleware(Api)
  const { apiVersions, roles } = yield* AppConfig
  const routes = idempotency(app)
  if (!roles.has("mcp")) return withUcpErrorShape(requestMiddleware(Api, documentationRoutes(apiVersions))(routes))
  // MCP tool calls are dispatched through the whole application, as REST requests are served.
  const mcp = (yield* makeMcpEndpoint)((request) =>
    Effect.provideService(whole, HttpServerRequest.HttpServerRequest, request) as Effect.Effect<
      HttpServerResponse.HttpServerResponse
    >
  )
  const whole: HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices> = requestMiddleware(Api, [
    ...documentationRoutes(apiVersions),
    { method: "POST", path: MCP_PATH }
  ])(
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => request.method === "POST" && request.url.split("?")[0] === MCP_PATH ? mcp : routes
    )
  )
  return withUcpErrorShape(whole)
})

export const HttpAppLive = Layer.scoped(HttpAppService, httpAppWithMiddleware).pipe(
  Layer.provide(RoutesLive),
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
)
