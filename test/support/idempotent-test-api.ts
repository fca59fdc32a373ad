/**
 * A test API behind the request and idempotency middlewares, on a memory idempotency store, as a
 * web handler: for tests of the middleware itself, with routes of their own.
 */
import { type HttpApi, HttpApiBuilder, HttpApp, HttpServer } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { type IdempotencyOptions, makeIdempotencyMiddleware } from "../../src/idempotency/http/middleware.ts"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { AppConfig, type AppConfigShape } from "../../src/platform/config.ts"
import { requestMiddleware } from "../../src/platform/http/middleware.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import { API_KEY, API_VERSION } from "./http.ts"
import { testConfig } from "./test-config.ts"

/**
 * Serves `api`, implemented by `apiLive` (`HttpApiBuilder.api` with its groups and security
 * middlewares provided), in this scope; the handler, and the idempotency store behind it.
 */
export const serveIdempotentApi = (
  api: HttpApi.HttpApi.Any,
  apiLive: Layer.Layer<HttpApi.Api, never, any>,
  options: { readonly config?: Partial<AppConfigShape>; readonly idempotency?: IdempotencyOptions } = {}
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      apiLive.pipe(
        Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)),
        Layer.provideMerge(MemoryIdempotencyStore.pipe(Layer.provide(freshMemoryDatabase))),
        Layer.provideMerge(Layer.succeed(AppConfig, testConfig(options.config))),
        Layer.provideMerge(HttpServer.layerContext)
      ) as Layer.Layer<HttpApi.Api | IdempotencyStore, never, never>
    )
    const handler = yield* Effect.gen(function*() {
      const app = yield* HttpApiBuilder.httpApp
      const idempotency = yield* makeIdempotencyMiddleware(api, options.idempotency)
      return HttpApp.toWebHandlerRuntime(yield* Effect.runtime<never>())(
        requestMiddleware(api)(idempotency(app)) as HttpApp.Default<never, never>
      )
    }).pipe(Effect.provide(context as Context.Context<any>))
    /** A POST with a valid API key and API-Version, `{}` by default; `key`: its Idempotency-Key. */
    const post = (
      path: string,
      options: { readonly key?: string; readonly body?: string; readonly headers?: Record<string, string> } = {}
    ) =>
      Effect.promise(async () => {
        const response = await handler(
          new Request(`http://acp.test${path}`, {
            method: "POST",
            body: options.body ?? "{}",
            headers: {
              authorization: `Bearer ${API_KEY}`,
              "api-version": API_VERSION,
              "content-type": "application/json",
              ...(options.key !== undefined ? { "idempotency-key": options.key } : {}),
              ...options.headers
            }
          })
        )
        const text = await response.text()
        return {
          status: response.status,
          replayed: response.headers.get("idempotent-replayed") === "true",
          body: JSON.parse(text)
        }
      })
    return { handler, post, store: Context.get(context, IdempotencyStore) }
  })
