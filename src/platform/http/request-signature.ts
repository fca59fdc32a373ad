/**
 * Optional request signing (CONTRACT §3). When `REQUEST_SIGNING_SECRETS` is set, checkout (and
 * delegate) requests must carry `Timestamp` (Unix seconds or RFC 3339, within 300 s of the
 * Clock) and `Signature` = base64url HMAC-SHA256(secret, timestamp + "." + raw body), checked
 * against every configured secret (rotation) in constant time; otherwise 401
 * `{type: "invalid_request", code: "invalid_signature"}`. When unset, both headers are accepted
 * and ignored (the body is not even read here).
 *
 * The raw body is read once per request (`request-body-bytes.ts`), so the handler gets the same
 * text afterwards (with the same 1 MiB limit). A body that cannot be read (too large, broken
 * stream) is left for the handler to report (413/400): the handler fails on the same read before
 * doing anything.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Clock, Effect, Either, Layer, Option, Redacted } from "effect"
import { verifyRequestSignature } from "../../shared/request-signing.ts"
import { AppConfig, type AppConfigShape } from "../config.ts"
import { Unauthorized, UnauthorizedWire } from "./errors.ts"
import { requestBodyText } from "./request-body-bytes.ts"

/** Accepted distance between the `Timestamp` header and the Clock, in seconds. */
export const REQUEST_SIGNATURE_TOLERANCE_SECONDS = 300

export class RequestSignature extends HttpApiMiddleware.Tag<RequestSignature>()("acp/RequestSignature", {
  failure: UnauthorizedWire
}) {}

export const invalidSignature = (detail: string) =>
  new Unauthorized({
    type: "invalid_request",
    code: "invalid_signature",
    message: `Invalid request signature: ${detail}. Send Timestamp and Signature = base64url ` +
      `HMAC-SHA256(secret, timestamp + "." + raw body).`
  })

const detailOf = {
  missing: "the Signature and Timestamp headers are required",
  malformed: "the Signature or Timestamp header is malformed",
  stale: `the Timestamp is more than ${REQUEST_SIGNATURE_TOLERANCE_SECONDS} seconds old`,
  future: `the Timestamp is more than ${REQUEST_SIGNATURE_TOLERANCE_SECONDS} seconds in the future`,
  mismatch: "the Signature does not match the request"
} as const

/**
 * The signature check of a request with its raw body at `nowMillis`: undefined when it holds (or
 * when no secret is configured), else the 401. Shared by the `RequestSignature` middleware and the
 * idempotency middleware, which must not replay a stored answer to an unsigned request.
 */
export const makeRequestSignatureCheck = (signingSecrets: ReadonlyArray<Redacted.Redacted<string>>) => {
  const secrets = signingSecrets.map((secret) => Redacted.value(secret))
  return (
    headers: { readonly [name: string]: string | undefined },
    rawBody: string,
    nowMillis: number
  ): Unauthorized | undefined => {
    if (secrets.length === 0) return undefined
    const verified = verifyRequestSignature({
      signature: headers["signature"],
      timestamp: headers["timestamp"],
      rawBody,
      secrets,
      nowSeconds: Math.floor(nowMillis / 1000),
      toleranceSeconds: REQUEST_SIGNATURE_TOLERANCE_SECONDS
    })
    return Either.isLeft(verified) ? invalidSignature(detailOf[verified.left.reason]) : undefined
  }
}

/**
 * The signature problem of the current request, if any, under `secrets` (none configured: never).
 * An unreadable body is no problem here: the handler reads the same cached failure and answers
 * 413/400.
 */
export const makeRequestSignatureProblem = (secrets: AppConfigShape["requestSigningSecrets"]) => {
  if (secrets.length === 0) return Effect.succeed(undefined)
  const check = makeRequestSignatureCheck(secrets)
  // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* Effect.option(requestBodyText)
    if (Option.isNone(body)) return undefined
    return check(request.headers, body.value, yield* Clock.currentTimeMillis)
  })
}

export const RequestSignatureLive = Layer.effect(
  RequestSignature,
  Effect.map(AppConfig, (config) => {
    const problemOf = makeRequestSignatureProblem(config.requestSigningSecrets)
    return Effect.flatMap(problemOf, (problem) => problem === undefined ? Effect.void : Effect.fail(problem))
  })
)
