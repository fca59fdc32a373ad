/**
 * UCP's protocol errors are `{code, content}` (the overview's transport bindings), with `path` when a
 * request field is at fault. Every rule the routes share (authentication, body limits, idempotency,
 * rate limits, unknown routes) answers in the common envelope `{type, code, message, param}`; on UCP
 * paths this rewrites that envelope, once, at the edge, keeping the status and headers.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { UCP_REST_PATH } from "./api.ts"

const decoder = new TextDecoder()

interface CommonEnvelope {
  readonly type: string
  readonly code: string
  readonly message: string
  readonly param?: string
}

const isCommonEnvelope = (json: unknown): json is CommonEnvelope =>
  typeof json === "object" && json !== null && typeof (json as CommonEnvelope).type === "string" &&
  typeof (json as CommonEnvelope).code === "string" && typeof (json as CommonEnvelope).message === "string"

export const ucpErrorBody = (error: CommonEnvelope) => ({
  code: error.code,
  content: error.message,
  ...(typeof error.param === "string" ? { path: error.param } : {})
})

export const toUcpErrorShape = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  let json: unknown
  try {
    json = JSON.parse(decoder.decode(response.body.body))
  } catch {
    return response
  }
  if (!isCommonEnvelope(json)) return response
  const { "content-length": _length, "content-type": _type, ...headers } = response.headers
  return HttpServerResponse.unsafeJson(ucpErrorBody(json), { status: response.status, headers })
}

const isUcpPath = (url: string) => url === UCP_REST_PATH || url.startsWith(`${UCP_REST_PATH}/`)

/** Outermost, so that the answers of the shared rules and of unknown routes are rewritten too. */
export const withUcpErrorShape = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) => isUcpPath(request.url.split("?")[0]!) ? Effect.map(app, toUcpErrorShape) : app
  )
