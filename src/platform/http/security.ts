/**
 * The middleware every checkout and delegate route runs before its handler (CONTRACT §3):
 * bearer authentication (constant-time comparison against every configured key) and the
 * API-Version check. Auth runs first: an unauthenticated caller learns nothing else.
 */
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

/**
 * The client of each request that a bearer check let through, by request. Every check of a
 * request (`Authorization`, the bearer checks of groups with their own error objects, the
 * idempotency middleware) resolves the token once and later ones read it here: the key's
 * SHA-256 and its constant-time comparisons are paid once per request.
 */
const authenticated = new WeakMap<HttpServerRequest.HttpServerRequest, Client>()

/**
 * The client of `request` by its bearer token (undefined when it matches no configured key),
 * resolved once per request with `resolve` (every resolver of a process is built from the same
 * configured keys).
 */
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

/**
 * The caller of the current request, on routes behind `Authorization`. Read from the check's
 * result rather than provided by the middleware: providing a service per request costs a FiberRef
 * scope on every authenticated request. On a route without `Authorization` it is a defect.
 */
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

/**
 * The `API-Version` of a request that the `ApiVersion` middleware let through: one of the accepted
 * versions, which picks the wire codec. Read from the header rather than provided by the
 * middleware: providing a service per request costs measurably more on the hottest routes.
 */
export const RequestedApiVersion: Effect.Effect<ApiVersionName, never, HttpServerRequest.HttpServerRequest> = Effect
  .map(HttpServerRequest.HttpServerRequest, (request) => request.headers["api-version"] as ApiVersionName)

export const unauthorized = () =>
  new Unauthorized({
    type: "invalid_request",
    code: "unauthorized",
    message: "Missing or invalid API key: send Authorization: Bearer <API key>."
  })

/** The stable, non-secret id of an API key (the `CurrentClient.keyId` of requests made with it). */
export const apiKeyId = (key: string): string => `key_${sha256(key).subarray(0, 6).toString("hex")}`

/**
 * The bearer token of an `Authorization` header value, read exactly as the `HttpApiSecurity.bearer`
 * decoder of @effect/platform reads it (everything after the first 7 characters, "Bearer ").
 */
export const bearerTokenOf = (authorization: string | undefined): string =>
  (authorization ?? "").slice("bearer ".length)

/**
 * A function from a presented bearer token to the id of the configured key it matches, or
 * undefined. Shared by the `Authorization` middleware and by anything else that must scope by
 * caller before the route runs (idempotency), so both always agree on who is calling.
 */
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

/**
 * The bearer check of `Authorization` for a group whose 401 is in an error object of its own: a
 * middleware (built from the configuration) that lets through exactly the requests `Authorization`
 * lets through and fails the others with `refusal`.
 */
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

/**
 * The bearer check: the token `HttpApiSecurity.bearer` decodes is the one `bearerTokenOf` reads
 * from the same header, resolved once per request (`authenticate`).
 */
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

/**
 * What is wrong with the `API-Version` header of a request, or undefined when it names a supported
 * version. Shared by the `ApiVersion` middleware and the idempotency middleware, which must not
 * replay a stored answer to a request the route would refuse.
 */
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
