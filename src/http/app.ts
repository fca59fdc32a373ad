/**
 * The whole HTTP application as one `HttpApp`: the API routes, OpenAPI at `/openapi.json`,
 * Swagger UI at `/docs`, and the request middleware. `main.ts` serves it on a port; tests call it
 * directly with a request, on the test's own Clock.
 */
import { type HttpApp, HttpApiBuilder, HttpApiSwagger, type HttpRouter } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { Api } from "./api.ts"
import { CheckoutHandlers } from "./checkout-handlers.ts"
import { DecodeErrorMiddleware, requestMiddleware } from "./middleware.ts"
import { ApiVersionLive, AuthorizationLive } from "./security.ts"
import { SystemHandlers } from "./system-handlers.ts"

export class HttpAppService extends Context.Tag("acp/HttpApp")<
  HttpAppService,
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>
>() {}

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([CheckoutHandlers, SystemHandlers]),
  Layer.provide([AuthorizationLive, ApiVersionLive])
)

const RoutesLive = Layer.mergeAll(
  DecodeErrorMiddleware,
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiSwagger.layer({ path: "/docs" })
).pipe(Layer.provideMerge(ApiLive))

export const HttpAppLive = Layer.effect(HttpAppService, Effect.map(HttpApiBuilder.httpApp, requestMiddleware)).pipe(
  Layer.provide(RoutesLive),
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
)
