/**
 * Complete's answers are signed (the release recommends it for checkout completion): `Content-Digest`
 * of the exact bytes sent, and an RFC 9421 signature over `@status`, `content-digest` and
 * `content-type` with this business's signing key, `created` from the clock. A platform checks it with
 * the key of that `keyid` in `/.well-known/ucp`.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Either } from "effect"
import { signUcpMessage } from "../../shared/http-signatures/ucp.ts"
import type { UcpSigningKeysShape } from "../signing-keys.ts"

const CONTENT_TYPE = "application/json"

export const signedResponse = (keys: UcpSigningKeysShape) =>
(
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (response.status >= 300 || response.body._tag !== "Uint8Array") return Effect.succeed(response)
  const body = response.body.body
  return Effect.map(Clock.currentTimeMillis, (now) => {
    const signed = signUcpMessage(
      { status: response.status, headers: { "content-type": CONTENT_TYPE }, body },
      { key: keys.signatureKey, created: Math.floor(now / 1000) }
    )
    // The key was checked at start and the message built here: signing cannot fail but by a defect.
    const headers = Either.getOrThrow(signed)
    const { "content-length": _length, "content-type": _type, ...kept } = response.headers
    return HttpServerResponse.uint8Array(body, {
      status: response.status,
      contentType: CONTENT_TYPE,
      headers: { ...kept, ...headers }
    })
  })
}
