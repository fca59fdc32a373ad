/**
 * Optional request signing (CONTRACT §3): with `REQUEST_SIGNING_SECRETS` set, a request carries `Timestamp`
 * and `Signature` = base64url HMAC-SHA256(secret, timestamp + "." + raw body), else 401. An unreadable
 * body is left for the handler, which answers 413 or 400 on the same read.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Clock, Effect, Either, Layer, Option, Redacted } from "effect"
import { verifyRequestSignature } from "../../shared/request-signing.ts"
import { AppConfig, type AppConfigShape } from "../config.ts"
import { Unauthorized, UnauthorizedWire } from "./errors.ts"
import { requestBodyText } from "./request-body-bytes.ts"

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

/** Shared with the idempotency middleware, which must not replay a stored answer to an unsigned request. */
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
