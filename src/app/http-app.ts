/**
 * The whole HTTP application as one `HttpApp`: the API routes, the OpenAPI documents and Swagger UI
 * (`openapi-documents.ts`), and the request middleware. `main.ts` serves it on a port; tests call it
 * directly with a request, on the test's own Clock.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Layer } from "effect"
import { CheckoutHandlers } from "../checkout/http/handlers.ts"
import { ConsoleAccessLive } from "../console/http/access-middleware.ts"
import { ConsoleHandlers } from "../console/http/handlers.ts"
import { AcsHandlers } from "../delegate-authentication/http/acs-pages.ts"
import {
  AuthenticationMiddlewareLive,
  DelegateAuthenticationHandlers
} from "../delegate-authentication/http/handlers.ts"
import { DelegateHandlers, DelegateMiddlewareLive } from "../delegate-payment/http/handlers.ts"
import { makeIdempotencyMiddleware } from "../idempotency/http/middleware.ts"
import { makeMcpEndpoint, MCP_PATH } from "../mcp/http/handlers.ts"
import { OrdersHandlers, WebhookDeliveriesHandlers } from "../orders/http/handlers.ts"
import { OrderPageHandlers } from "../orders/http/order-page-handlers.ts"
import { AppConfig } from "../platform/config.ts"
import { decodeErrorMiddleware, requestMiddleware } from "../platform/http/middleware.ts"
import { RequestSignatureLive } from "../platform/http/request-signature.ts"
import { MAX_PARAM_LENGTH } from "../platform/http/route-table.ts"
import { ApiVersionLive, AuthorizationLive } from "../platform/http/security.ts"
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
    ConsoleHandlers
  ]),
  Layer.provide([
    AuthorizationLive,
    ApiVersionLive,
    RequestSignatureLive,
    DelegateMiddlewareLive,
    AuthenticationMiddlewareLive,
    ConsoleAccessLive
  ])
)

const RoutesLive = Layer.mergeAll(
  decodeErrorMiddleware(Api),
  DocumentationRoutesLive
).pipe(Layer.provideMerge(ApiLive))

/**
 * Paths match exactly as the interface document writes them: the router's defaults would also take
 * `/CHECKOUT_SESSIONS`, a trailing slash and doubled slashes as the same route, so one request
 * would have several spellings, each its own idempotency scope (CONTRACT §6: scoped to the path).
 * Percent-encoding is still decoded; the idempotency scope makes it canonical (`canonicalPath`).
 */
const strictRouting = {
  caseSensitive: true,
  ignoreTrailingSlash: false,
  ignoreDuplicateSlashes: false,
  maxParamLength: MAX_PARAM_LENGTH
}

/**
 * Idempotency sits inside `requestMiddleware`: Request-Id, the access log and the 404/405/500
 * mapping stay per request (a replay gets its own Request-Id), while every POST route of a group
 * declared `Idempotent`, present and future, is covered without doing anything else
 * (`src/idempotency/http/middleware.ts`). Needs `IdempotencyStore`.
 */
const httpAppWithMiddleware = Effect.gen(function*() {
  const app = yield* HttpApiBuilder.httpApp.pipe(HttpRouter.withRouterConfig(strictRouting))
  const idempotency = yield* makeIdempotencyMiddleware(Api)
  const { apiVersions, roles } = yield* AppConfig
  const routes = idempotency(app)
  if (!roles.has("mcp")) return requestMiddleware(Api, documentationRoutes(apiVersions))(routes)
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
  return whole
})

export const HttpAppLive = Layer.scoped(HttpAppService, httpAppWithMiddleware).pipe(
  Layer.provide(RoutesLive),
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
)
