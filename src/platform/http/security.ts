/** Bearer authentication, then the API-Version check, so an unauthenticated caller learns nothing (CONTRACT §3). */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Layer, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import type { ApiVersionName } from "../../shared/api-versions.ts"
import { sha256 } from "../../shared/sha256.ts"
import { AppConfig, type AppConfigShape } from "../config.ts"
import { BadRequest, BadRequestWire, Unauthorized, UnauthorizedWire } from "./errors.ts"

/** Who is calling: a stable, non-secret id of the API key used (scope of idempotency and rate limits). */
export interface Client {
  readonly keyId: string
}

/** The client of each request that authenticated: a request's checks resolve its token once. */
const authenticated = new WeakMap<HttpServerRequest.HttpServerRequest, Client>()

export const authenticate = (
  resolve: (token: string) => string | undefined,
  request: HttpServerRequest.HttpServerRequest
): Client | undefined => {
  const known = authenticated.get(request)
  if (known !== undefined) return known
  const keyId = resolve(bearerTokenOf(request.headers["authorization"]))
  if (keyId === undefined) return undefined
  const client = { keyId }
  authenticated.set(request, client)
  return client
}

/** The caller behind `Authorization`: the check's result, cheaper than a service provided per request. */
export const CurrentClient: Effect.Effect<Client, never, HttpServerRequest.HttpServerRequest> = Effect.flatMap(
  HttpServerRequest.HttpServerRequest,
  (request) => {
    const client = authenticated.get(request)
    return client === undefined
      ? Effect.dieMessage("CurrentClient read on a route without Authorization")
      : Effect.succeed(client)
  }
)

export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("acp/Authorization", {
  failure: UnauthorizedWire,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export class ApiVersion extends HttpApiMiddleware.Tag<ApiVersion>()("acp/ApiVersion", {
  failure: BadRequestWire
}) {}

/** The `API-Version` that `ApiVersion` let through, read from the header for the reason of `CurrentClient`. */
export const RequestedApiVersion: Effect.Effect<ApiVersionName, never, HttpServerRequest.HttpServerRequest> = Effect
  .map(HttpServerRequest.HttpServerRequest, (request) => request.headers["api-version"] as ApiVersionName)

export const unauthorized = () =>
  new Unauthorized({
    type: "invalid_request",
    code: "unauthorized",
    message: "Missing or invalid API key: send Authorization: Bearer <API key>."
  })

export const apiKeyId = (key: string): string => `key_${sha256(key).subarray(0, 6).toString("hex")}`

/** Read exactly as `HttpApiSecurity.bearer` reads it: everything after the first 7 characters. */
export const bearerTokenOf = (authorization: string | undefined): string =>
  (authorization ?? "").slice("bearer ".length)

/** Shared with the idempotency middleware, so that both agree on who is calling. */
export const makeApiKeyResolver = (apiKeys: ReadonlyArray<Redacted.Redacted<string>>) => {
  const keys = apiKeys.map((key) => ({ hash: sha256(Redacted.value(key)), keyId: apiKeyId(Redacted.value(key)) }))
  return (token: string): string | undefined => {
    const presented = sha256(token)
    // Compare against every key, without an early exit, so timing says nothing about which matched.
    let match: string | undefined
    for (const key of keys) {
      if (timingSafeEqual(presented, key.hash) && match === undefined) match = key.keyId
    }
    return token.length === 0 ? undefined : match
  }
}

/** For a group whose 401 has an error object of its own: lets through exactly what `Authorization` does. */
export const makeBearerCheck = <E>(
  refusal: (request: HttpServerRequest.HttpServerRequest, config: AppConfigShape) => E
) =>
  Effect.map(AppConfig, (config) => {
    const resolve = makeApiKeyResolver(config.apiKeys)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      authenticate(resolve, request) !== undefined
        ? Effect.void
        : Effect.fail(refusal(request, config)))
  })

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.map(AppConfig, (config) => {
    const resolve = makeApiKeyResolver(config.apiKeys)
    return Authorization.of({
      bearer: () =>
        Effect.flatMap(
          HttpServerRequest.HttpServerRequest,
          (request) => authenticate(resolve, request) === undefined ? Effect.fail(unauthorized()) : Effect.void
        )
    })
  })
)

const versionPattern = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/

/** Shared with the idempotency middleware, which must not replay an answer to a request the route refuses. */
export const makeApiVersionCheck = (apiVersions: ReadonlyArray<ApiVersionName>) => {
  const supported = new Set<string>(apiVersions)
  const supported_versions = [...apiVersions]
  return (version: string | undefined): BadRequest | undefined => {
    if (version === undefined || version.trim() === "") {
      return new BadRequest({
        type: "invalid_request",
        code: "missing_api_version",
        message: "The API-Version header is required.",
        param: "$.headers['API-Version']",
        supported_versions
      })
    }
    if (!versionPattern.test(version) || !supported.has(version as ApiVersionName)) {
      return new BadRequest({
        type: "invalid_request",
        code: "unsupported_api_version",
        message: `API-Version must be one of ${supported_versions.join(", ")}.`,
        param: "$.headers['API-Version']",
        supported_versions
      })
    }
    return undefined
  }
}

export const ApiVersionLive = Layer.effect(
  ApiVersion,
  Effect.map(AppConfig, (config) => {
    const check = makeApiVersionCheck(config.apiVersions)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const version = request.headers["api-version"]
      const problem = check(version)
      return problem === undefined ? Effect.void : Effect.fail(problem)
    })
  })
)
