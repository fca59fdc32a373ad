/**
 * Optional request signing (CONTRACT §3). When `REQUEST_SIGNING_SECRETS` is set, checkout (and
 * delegate) requests must carry `Timestamp` (Unix seconds or RFC 3339, within 300 s of the
 * Clock) and `Signature` = base64url HMAC-SHA256(secret, timestamp + "." + raw body), checked
 * against every configured secret (rotation) in constant time; otherwise 401
 * `{type: "invalid_request", code: "invalid_signature"}`. When unset, both headers are accepted
 * and ignored (the body is not even read here).
 *
 * The raw body is read through `request.text`, which the platform caches per request, so the
 * handler reads the same text again afterwards (with the same 1 MiB limit). A body that cannot be
 * read (too large, broken stream) is left for the handler to report (413/400): the handler fails
 * on the same cached read before doing anything.
 */
import { HttpApiMiddleware, HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Either, Layer, Option, Redacted } from "effect"
import { verifyRequestSignature } from "../domain/webhook.ts"
import { AppConfig } from "../services/config.ts"
import { Unauthorized, UnauthorizedWire } from "./errors.ts"
import { MAX_BODY_BYTES } from "./request-body.ts"

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

export const RequestSignatureLive = Layer.effect(
  RequestSignature,
  Effect.map(AppConfig, (config) => {
    const secrets = config.requestSigningSecrets.map((secret) => Redacted.value(secret))
    if (secrets.length === 0) return Effect.void
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = yield* request.text.pipe(
        HttpServerRequest.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
        Effect.option
      )
      // Unreadable body: the handler reads the same cached failure and answers 413/400.
      if (Option.isNone(body)) return
      const now = yield* Clock.currentTimeMillis
      const verified = verifyRequestSignature({
        signature: request.headers["signature"],
        timestamp: request.headers["timestamp"],
        rawBody: body.value,
        secrets,
        nowSeconds: Math.floor(now / 1000),
        toleranceSeconds: REQUEST_SIGNATURE_TOLERANCE_SECONDS
      })
      if (Either.isLeft(verified)) return yield* Effect.fail(invalidSignature(detailOf[verified.left.reason]))
    })
  })
)
