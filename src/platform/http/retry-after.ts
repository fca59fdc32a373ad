/** `Retry-After` on every answer asking the client to come back (CONTRACT §3, §6): 429, 503, 409 in flight. */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { ErrorFamilyName } from "./route-declarations.ts"

/** Seconds after a 503, by error family; the checkout one also for any 503 that says nothing. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS: Record<ErrorFamilyName, number> = {
  checkout: 2,
  delegate: 5,
  delegate_authentication: 5
}

export const IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS = 1

export const withRetryAfter = (seconds: number) => (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeader(response, "retry-after", String(seconds))

/** For a handler failing with a typed error, whose response the API encodes later. */
export const setRetryAfter = (seconds: number): Effect.Effect<void> =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(withRetryAfter(seconds)(response)))

export const withRetryAfterOn503 = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? withRetryAfter(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.checkout)(response)
    : response

/** Whether a response of `status` carries `Retry-After` (`idempotentPost`: a POST taking an Idempotency-Key). */
export const carriesRetryAfter = (status: number, idempotentPost: boolean): boolean =>
  status === 429 || status === 503 || (status === 409 && idempotentPost)
