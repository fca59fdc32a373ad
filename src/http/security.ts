/**
 * The middleware every checkout and delegate route runs before its handler (CONTRACT §3):
 * bearer authentication (constant-time comparison against every configured key) and the
 * API-Version check. Auth runs first: an unauthenticated caller learns nothing else.
 */
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../services/config.ts"
import { BadRequest, BadRequestWire, Unauthorized, UnauthorizedWire } from "./errors.ts"

/** Who is calling: a stable, non-secret id of the API key used (scope of idempotency and rate limits). */
export class CurrentClient extends Context.Tag("acp/CurrentClient")<CurrentClient, { readonly keyId: string }>() {}

export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("acp/Authorization", {
  failure: UnauthorizedWire,
  provides: CurrentClient,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export class ApiVersion extends HttpApiMiddleware.Tag<ApiVersion>()("acp/ApiVersion", {
  failure: BadRequestWire
}) {}

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest()

export const unauthorized = () =>
  new Unauthorized({
    type: "invalid_request",
    code: "unauthorized",
    message: "Missing or invalid API key: send Authorization: Bearer <API key>."
  })

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.map(AppConfig, (config) => {
    const keys = config.apiKeys.map((key) => {
      const hash = digest(Redacted.value(key))
      return { hash, keyId: `key_${hash.subarray(0, 6).toString("hex")}` }
    })
    return Authorization.of({
      bearer: (token) =>
        Effect.suspend(() => {
          const presented = digest(Redacted.value(token))
          // Compare against every key, without an early exit, so timing says nothing about which matched.
          let match: string | undefined
          for (const key of keys) {
            if (timingSafeEqual(presented, key.hash) && match === undefined) match = key.keyId
          }
          return match === undefined || Redacted.value(token).length === 0
            ? Effect.fail(unauthorized())
            : Effect.succeed({ keyId: match })
        })
    })
  })
)

const versionPattern = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/

export const ApiVersionLive = Layer.effect(
  ApiVersion,
  Effect.map(AppConfig, (config) => {
    const supported = new Set(config.apiVersions)
    const supported_versions = [...config.apiVersions]
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const version = request.headers["api-version"]
      if (version === undefined || version.trim() === "") {
        return Effect.fail(
          new BadRequest({
            type: "invalid_request",
            code: "missing_api_version",
            message: "The API-Version header is required.",
            param: "$.headers['API-Version']",
            supported_versions
          })
        )
      }
      if (!versionPattern.test(version) || !supported.has(version)) {
        return Effect.fail(
          new BadRequest({
            type: "invalid_request",
            code: "unsupported_api_version",
            message: `API-Version must be one of ${supported_versions.join(", ")}.`,
            param: "$.headers['API-Version']",
            supported_versions
          })
        )
      }
      return Effect.void
    })
  })
)
