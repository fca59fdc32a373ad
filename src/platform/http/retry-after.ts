/**
 * `Retry-After`: every answer that asks the client to come back later says when (CONTRACT §3, §6).
 * - 503 (storage unreachable): a few seconds; the delegate vault's own 503 waits longer;
 * - 429 (rate limited): the seconds until the caller's bucket holds a token again, as the rate
 *   limiter computed them;
 * - 409 `idempotency_in_flight`: a request with the same key is still running; requests here take
 *   milliseconds, so retry soon.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { ErrorFamilyName } from "./route-declarations.ts"

/**
 * Seconds to wait after a 503, by the error family of the route: the checkout family's is also
 * the default of any 503 that says nothing (`withRetryAfterOn503`).
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS: Record<ErrorFamilyName, number> = {
  checkout: 2,
  delegate: 5,
  delegate_authentication: 5
}

/** Seconds to wait after a 409 `idempotency_in_flight`. */
export const IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS = 1

/** The response with `Retry-After: <seconds>`. */
export const withRetryAfter = (seconds: number) => (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeader(response, "retry-after", String(seconds))

/**
 * Adds `Retry-After: <seconds>` to the response of the current request, whatever it becomes: for a
 * handler that fails with a typed error, whose response the API encodes later.
 */
export const setRetryAfter = (seconds: number): Effect.Effect<void> =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(withRetryAfter(seconds)(response)))

/** Every 503 carries `Retry-After` (CONTRACT §3), whichever route or middleware produced it. */
export const withRetryAfterOn503 = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? withRetryAfter(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.checkout)(response)
    : response

/** Whether a response of `status` carries `Retry-After` (`idempotentPost`: a POST taking an Idempotency-Key). */
export const carriesRetryAfter = (status: number, idempotentPost: boolean): boolean =>
  status === 429 || status === 503 || (status === 409 && idempotentPost)
