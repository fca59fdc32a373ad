/**
 * The routes of an assembled `HttpApi`, built once at start: each endpoint's method and path
 * template with what its group declares (middlewares, annotations). Anything that must act on a
 * request before or around the router (404 versus 405, idempotency) looks the request up here, so
 * it follows the declarations instead of path prefixes.
 *
 * Paths are matched as the router matches them (`src/app/http-app.ts`: exact spelling,
 * case-sensitive); a `:param` segment matches any non-empty segment of at most `MAX_PARAM_LENGTH`
 * characters once percent-decoded. Static segments win over parameters, as in the router.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { Context, Option } from "effect"

export interface Route {
  readonly method: string
  /** The template, e.g. `/checkout_sessions/:checkout_session_id`. */
  readonly path: string
  /** The group the endpoint belongs to. */
  readonly group: string
  /** The middlewares the API, the group and the endpoint declare. */
  readonly middlewares: ReadonlySet<HttpApiMiddleware.TagClassAny>
  /** The annotations of the API, the group and the endpoint, the nearest winning. */
  readonly annotations: Context.Context<never>
}

export interface RouteTable {
  readonly routes: ReadonlyArray<Route>
  /** The route `method` and `path` (without query) reach, if any. */
  readonly find: (method: string, path: string) => Route | undefined
  /** The methods of the path template `path` matches, in declaration order; empty when none does. */
  readonly methodsAt: (path: string) => ReadonlyArray<string>
}

/** A route outside the API's groups (OpenAPI, documentation): only its method and path are known. */
export interface ExtraRoute {
  readonly method: string
  readonly path: string
}

/**
 * The longest path parameter, in characters: the router is configured with it (`maxParamLength`,
 * measured after its decoding), and a longer one matches no route. It bounds what is kept of a
 * path (an idempotency key's scope).
 */
export const MAX_PARAM_LENGTH = 100

const patternOf = (template: string): RegExp =>
  new RegExp(
    "^" +
      template.split("/").map((part) => (part.startsWith(":") ? "([^/]+)" : part.replace(/[.]/g, "\\."))).join("/") +
      "$"
  )

/**
 * A parameter's length as the router measures it: percent-decoded (a path whose escapes do not
 * decode is no route there, so none here either).
 */
const decodedLength = (segment: string): number | undefined => {
  if (!segment.includes("%")) return segment.length
  try {
    return decodeURIComponent(segment).length
  } catch {
    return undefined
  }
}

/** Whether `path` matches `pattern` with no parameter longer than the router allows. */
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
  // One entry per template, in declaration order; static templates before parametric ones.
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

/** Whether the route's group (or the API, or the endpoint) declares `middleware`. */
export const declares = (route: Route, middleware: Context.Tag<any, any>): boolean =>
  route.middlewares.has(middleware as unknown as HttpApiMiddleware.TagClassAny)

/** The value of an annotation the route's group (or the API, or the endpoint) declares. */
export const annotation = <I, S>(route: Route, tag: Context.Tag<I, S>): Option.Option<S> =>
  Context.getOption(route.annotations as Context.Context<I>, tag)
