/**
 * The routes of the assembled `HttpApi` and their declarations, so that what acts before the router (404
 * or 405, idempotency) follows them; paths match as in the router (`src/app/http-app.ts`).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { Context, Option } from "effect"

export interface Route {
  readonly method: string
  readonly path: string
  readonly group: string
  readonly middlewares: ReadonlySet<HttpApiMiddleware.TagClassAny>
  /** The annotations of the API, the group and the endpoint, the nearest winning. */
  readonly annotations: Context.Context<never>
}

export interface RouteTable {
  readonly routes: ReadonlyArray<Route>
  /** The route `method` and `path` (without query) reach, if any. */
  readonly find: (method: string, path: string) => Route | undefined
  readonly methodsAt: (path: string) => ReadonlyArray<string>
}

export interface ExtraRoute {
  readonly method: string
  readonly path: string
}

/** The router's `maxParamLength`, percent-decoded: a longer parameter matches no route. */
export const MAX_PARAM_LENGTH = 100

const patternOf = (template: string): RegExp =>
  new RegExp(
    "^" +
      template.split("/").map((part) => (part.startsWith(":") ? "([^/]+)" : part.replace(/[.]/g, "\\."))).join("/") +
      "$"
  )

/** Percent-decoded, as the router measures; escapes that do not decode match no route. */
const decodedLength = (segment: string): number | undefined => {
  if (!segment.includes("%")) return segment.length
  try {
    return decodeURIComponent(segment).length
  } catch {
    return undefined
  }
}

const matches = (pattern: RegExp, path: string): boolean => {
  const found = pattern.exec(path)
  if (found === null) return false
  for (let i = 1; i < found.length; i++) {
    const length = decodedLength(found[i]!)
    if (length === undefined || length > MAX_PARAM_LENGTH) return false
  }
  return true
}

const parameterCount = (template: string) => template.split("/").filter((part) => part.startsWith(":")).length

export const makeRouteTable = (api: HttpApi.HttpApi.Any, extra: ReadonlyArray<ExtraRoute> = []): RouteTable => {
  const routes: Array<Route> = []
  const apiMiddlewares = (api as HttpApi.HttpApi.AnyWithProps).middlewares
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      routes.push({
        method: endpoint.method,
        path: endpoint.path,
        group: group.identifier,
        middlewares: new Set([...apiMiddlewares, ...middleware]),
        annotations: mergedAnnotations
      })
    }
  })
  for (const route of extra) {
    routes.push({ ...route, group: "", middlewares: new Set(), annotations: Context.empty() })
  }
  // Fewer parameters first, so that static segments win, as in the router.
  const templates = new Map<string, { readonly pattern: RegExp; readonly byMethod: Map<string, Route> }>()
  for (const route of routes) {
    const template = templates.get(route.path) ?? { pattern: patternOf(route.path), byMethod: new Map() }
    template.byMethod.set(route.method, route)
    templates.set(route.path, template)
  }
  const ordered = [...templates].sort(([a], [b]) => parameterCount(a) - parameterCount(b)).map(([, t]) => t)
  const templateOf = (path: string) => ordered.find((template) => matches(template.pattern, path))
  return {
    routes,
    find: (method, path) => templateOf(path)?.byMethod.get(method),
    methodsAt: (path) => [...(templateOf(path)?.byMethod.keys() ?? [])]
  }
}

export const declares = (route: Route, middleware: Context.Tag<any, any>): boolean =>
  route.middlewares.has(middleware as unknown as HttpApiMiddleware.TagClassAny)

export const annotation = <I, S>(route: Route, tag: Context.Tag<I, S>): Option.Option<S> =>
  Context.getOption(route.annotations as Context.Context<I>, tag)
