/**
 * The context a group's requests run in. `HttpApiBuilder.group` captures the context its layer is
 * built in and merges it into the context of every request of the group (`Context.merge` per
 * request). Built in the application's context, that is every service of the application (about
 * forty): each request copied them all, and each Scope or service added while it ran (a scope
 * per SQL statement) copied that larger context again and compared it whole when it was taken
 * away. Handlers take their services when they are built, so a request needs none of them.
 *
 * `groupHandlers` is `HttpApiBuilder.group` with the group's layer built in a context of the
 * router and the group's middleware alone (what `HttpApiBuilder.group` reads to build the routes),
 * while the handlers' own build runs with every service it needs, as before. A handler that read a
 * service of the application from its context while a request runs would find none: its type
 * says so, and `groupHandlers` refuses it at compile time.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Context, Effect, Layer, Scope } from "effect"

/** The keys of the router, the layer's scope and every middleware of `group` and its endpoints. */
const keysFor = (group: HttpApiGroup.HttpApiGroup.AnyWithProps): ReadonlySet<string> => {
  const tags = [
    ...group.middlewares,
    ...Object.values(group.endpoints).flatMap((endpoint) => [...endpoint.middlewares])
  ]
  return new Set([HttpApiBuilder.Router.key, Scope.Scope.key, ...tags.map((tag) => tag.key)])
}

/**
 * `layer` (a group's handlers) built in a context of the router and `group`'s middleware only,
 * with the memo map of the build it is part of: the group registers its routes in the router
 * layer that the API's other groups and the API itself share.
 */
const ownContextOnly = <A, E, R>(
  group: HttpApiGroup.HttpApiGroup.AnyWithProps,
  layer: Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> => {
  const keys = keysFor(group)
  return Layer.scopedContext(
    Effect.flatMap(Effect.all([Layer.CurrentMemoMap, Effect.scope]), ([memoMap, scope]) =>
      Effect.mapInputContext(
        Layer.buildWithMemoMap(layer, memoMap, scope),
        (context: Context.Context<R>) =>
          Context.unsafeMake(new Map([...context.unsafeMap].filter(([key]) => keys.has(key)))) as Context.Context<R>
      ))
  )
}

/** What the handlers of `Return` read from a request's context beyond what the router provides. */
type RequestContext<Return> = Return extends HttpApiBuilder.Handlers<infer _E, infer _P, infer R, infer _Endpoints> ? R
  : Return extends
    Effect.Effect<HttpApiBuilder.Handlers<infer _E, infer _P, infer R, infer _Endpoints>, infer _EX, infer _RX> ? R
  : never

/** What building the handlers of `Return` needs. */
type BuildContext<Return> = Return extends Effect.Effect<infer _A, infer _EX, infer RX> ? RX : never

type UntypedGroup = (api: unknown, name: string, build: (handlers: unknown) => unknown) => Layer.Layer<unknown>

/**
 * `HttpApiBuilder.group(api, groupName, build)`, its requests run in their own context plus the
 * group's middleware: `build` runs in the context the layer is built in (it takes its services
 * there), the group captures only the router and its middleware. A handler that needs a service
 * while a request runs does not compile.
 */
export const groupHandlers = <
  ApiId extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  ApiError,
  ApiR,
  const Name extends HttpApiGroup.HttpApiGroup.Name<Groups>,
  Return
>(
  api: HttpApi.HttpApi<ApiId, Groups, ApiError, ApiR>,
  groupName: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<ApiError, ApiR, HttpApiGroup.HttpApiGroup.WithName<Groups, Name>>
  ) => [RequestContext<Return>] extends [never] ? HttpApiBuilder.Handlers.ValidateReturn<Return>
    : "a handler reads a service while a request runs: take it when the handlers are built"
): Layer.Layer<
  HttpApiGroup.ApiGroup<ApiId, Name>,
  HttpApiBuilder.Handlers.Error<Return>,
  Exclude<BuildContext<Return> | HttpApiGroup.HttpApiGroup.MiddlewareWithName<Groups, Name>, Scope.Scope>
> =>
  Layer.unwrapEffect(
    Effect.map(Effect.context<never>(), (context) =>
      ownContextOnly(
        (api as unknown as HttpApi.HttpApi.AnyWithProps).groups[groupName]!,
        (HttpApiBuilder.group as unknown as UntypedGroup)(api, groupName, (handlers) => {
          const built = build(handlers as never)
          return Effect.isEffect(built) ? Effect.provide(built, context) : built
        })
      ))
  ) as never
