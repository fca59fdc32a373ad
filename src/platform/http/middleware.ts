/**
 * What holds for every request (CONTRACT §3): `Request-Id` echoed and on every log line, one access log
 * line (never headers or bodies), 404/405/500 in the error envelope, `Retry-After` on 503, a valid
 * `Idempotency-Key` echoed, `Content-Language: en`.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect, FiberRef, HashMap } from "effect"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { toJsonPath } from "../../shared/schema-helpers.ts"
import { randomId } from "../ids.ts"
import { type ApiError, BadRequest, errorBody, internalError, MethodNotAllowed, NotFound, statusOf } from "./errors.ts"
import { isValidIdempotencyKey } from "./idempotency-key.ts"
import { withRetryAfterOn503 } from "./retry-after.ts"
import { type ExtraRoute, makeRouteTable, type RouteTable } from "./route-table.ts"

export const errorResponse = (error: ApiError) =>
  HttpServerResponse.unsafeJson(errorBody(error), { status: statusOf[error._tag] })

const requestIdPattern = /^[\x21-\x7e]{1,128}$/

const SHOWN_PATH_LENGTH = 200

const notFoundOrMethod = (routes: RouteTable, method: string, path: string) => {
  const masked = maskCardNumbers(path)
  const shown = masked.length > SHOWN_PATH_LENGTH ? `${masked.slice(0, SHOWN_PATH_LENGTH)}…` : masked
  const methods = routes.methodsAt(path)
  if (methods.length > 0 && !methods.includes(method)) {
    return errorResponse(
      new MethodNotAllowed({
        type: "invalid_request",
        code: "method_not_allowed",
        message: `${method} is not allowed on ${shown}; allowed: ${methods.join(", ")}.`
      })
    ).pipe(HttpServerResponse.setHeader("allow", methods.join(", ")))
  }
  return errorResponse(
    new NotFound({ type: "invalid_request", code: "not_found", message: `No route ${method} ${shown}.` })
  )
}

const isRouteNotFound = (u: unknown): boolean => HttpServerError.isServerError(u) && u._tag === "RouteNotFound"

/** Outermost. The request id annotates the rest of the fiber, not a scope: each request has a fiber of its own. */
export const requestMiddleware =
  (api: HttpApi.HttpApi.Any, extraRoutes: ReadonlyArray<ExtraRoute> = []) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> => {
    const routes = makeRouteTable(api, extraRoutes)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const given = request.headers["request-id"]
      const requestId = given !== undefined && requestIdPattern.test(given) ? given : randomId("req_")
      const started = Date.now()
      const path = request.url.split("?")[0]!
      // The router ends a path at ';' as at '?' (one resource, many idempotency scopes): not found here.
      const routed = path.includes(";") ? Effect.succeed(notFoundOrMethod(routes, request.method, path)) : app
      return FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set("request_id", requestId as unknown)).pipe(
        Effect.zipRight(routed),
        Effect.catchAllCause((cause) => {
          const failure = Cause.squash(cause)
          if (isRouteNotFound(failure)) return Effect.succeed(notFoundOrMethod(routes, request.method, path))
          // The client went away: nothing to answer, nothing wrong (499 in the access log).
          if (Cause.isInterruptedOnly(cause)) {
            return Effect.succeed(HttpServerResponse.empty({ status: 499 }))
          }
          return Effect.as(
            Effect.logError("unhandled failure", Cause.pretty(cause)),
            errorResponse(internalError())
          )
        }),
        Effect.tap((response) =>
          Effect.logInfo(`${request.method} ${path} ${response.status} ${Date.now() - started}ms`)
        ),
        Effect.map((response) =>
          withIdempotencyKeyEcho(request.headers["idempotency-key"])(
            withRetryAfterOn503(
              HttpServerResponse.setHeaders(response, { "request-id": requestId, "content-language": "en" })
            )
          )
        )
      )
    })
  }

/** A key that is not valid is not echoed (it may not be safe in a header); its 400 says why. */
const withIdempotencyKeyEcho = (key: string | undefined) => (response: HttpServerResponse.HttpServerResponse) =>
  key !== undefined && isValidIdempotencyKey(key)
    ? HttpServerResponse.setHeader(response, "idempotency-key", key)
    : response

const badRequestFromDecodeIssues = (
  issues: ReadonlyArray<{ readonly _tag: string; readonly path: ReadonlyArray<PropertyKey> }>
) => {
  const first = issues[0]
  const param = toJsonPath(first?.path ?? [])
  const missing = first?._tag === "Missing"
  return new BadRequest({
    type: "invalid_request",
    code: missing ? "missing" : "invalid",
    message: `${param} ${missing ? "is required" : "is invalid"}`,
    param
  })
}

/** Framework decode failures (path, headers, malformed JSON) as our 400s; handlers decode the bodies. */
export const decodeErrorMiddleware = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  HttpApiBuilder.middleware(api, (app) =>
    Effect.catchIf(
      app as HttpApp.Default<unknown>,
      (u): u is HttpApiError.HttpApiDecodeError => u instanceof HttpApiError.HttpApiDecodeError,
      (error) => Effect.fail(badRequestFromDecodeIssues(error.issues))
    ).pipe(
      Effect.catchAllDefect((defect) =>
        HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"
          ? Effect.fail(
            new BadRequest({
              type: "invalid_request",
              code: "invalid_json",
              message: "The request body is not valid JSON."
            })
          )
          : Effect.die(defect)
      )
    ) as HttpApp.Default<BadRequest> as HttpApp.Default<E>)
