/**
 * `groupHandlers`: `HttpApiBuilder.group` whose requests run in a context of the router and the group's
 * middleware only, not copying every service of the application per request. Handlers take theirs when
 * built; one reading a service while a request runs does not compile.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Context, Effect, Layer, Scope } from "effect"

const keysFor = (group: HttpApiGroup.HttpApiGroup.AnyWithProps): ReadonlySet<string> => {
  const tags = [
    ...group.middlewares,
    ...Object.values(group.endpoints).flatMap((endpoint) => [...endpoint.middlewares])
  ]
  return new Set([HttpApiBuilder.Router.key, Scope.Scope.key, ...tags.map((tag) => tag.key)])
}

// Built with the memo map of the surrounding build: the group registers in the router the API shares.
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

type BuildContext<Return> = Return extends Effect.Effect<infer _A, infer _EX, infer RX> ? RX : never

type UntypedGroup = (api: unknown, name: string, build: (handlers: unknown) => unknown) => Layer.Layer<unknown>

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
