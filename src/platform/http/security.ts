/**
 * Bearer authentication, then the API-Version check, so an unauthenticated caller learns nothing (CONTRACT §3).
 * Each authenticated route takes one kind of key: agent routes `AgentAuthorization`, merchant routes
 * `MerchantAuthorization`; an unknown key gets 401, a key of the other kind 403 `forbidden`.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect, Layer, Redacted, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import type { ApiVersionName } from "../../shared/api-versions.ts"
import { sha256 } from "../../shared/sha256.ts"
import { AppConfig, type AppConfigShape } from "../config.ts"
import { BadRequest, BadRequestWire, Forbidden, ForbiddenWire, Unauthorized, UnauthorizedWire } from "./errors.ts"

/** The kind of an API key: an agent platform's (`API_KEYS`) or the merchant's (`MERCHANT_API_KEYS`). */
export type KeyKind = "agent" | "merchant"

/** Who is calling: a stable, non-secret id of the API key used (scope of idempotency and rate limits), and its kind. */
export interface Client {
  readonly keyId: string
  readonly kind: KeyKind
}

/** A bearer token's client, if it is a configured key of either kind. */
export type KeyResolver = (token: string) => Client | undefined

/** Why a route refuses a request: no configured key (401), or a key of the other kind (403). */
export type KeyRefusal = "unauthorized" | "forbidden"

/** The client of each request that authenticated: a request's checks resolve its token once. */
const authenticated = new WeakMap<HttpServerRequest.HttpServerRequest, Client>()

export const authenticate = (
  resolve: KeyResolver,
  request: HttpServerRequest.HttpServerRequest
): Client | undefined => {
  const known = authenticated.get(request)
  if (known !== undefined) return known
  const client = resolve(bearerTokenOf(request.headers["authorization"]))
  if (client === undefined) return undefined
  authenticated.set(request, client)
  return client
}

/** What a route for `kind` keys answers the request: nothing when its key is of that kind. */
export const keyRefusal = (
  resolve: KeyResolver,
  request: HttpServerRequest.HttpServerRequest,
  kind: KeyKind
): KeyRefusal | undefined => {
  const client = authenticate(resolve, request)
  return client === undefined ? "unauthorized" : client.kind === kind ? undefined : "forbidden"
}

/** The caller behind `AgentAuthorization` or `MerchantAuthorization`: the check's result, read without a new one. */
export const CurrentClient: Effect.Effect<Client, never, HttpServerRequest.HttpServerRequest> = Effect.flatMap(
  HttpServerRequest.HttpServerRequest,
  (request) => {
    const client = authenticated.get(request)
    return client === undefined
      ? Effect.dieMessage("CurrentClient read on a route without AgentAuthorization or MerchantAuthorization")
      : Effect.succeed(client)
  }
)

const KeyRefused = Schema.Union(UnauthorizedWire, ForbiddenWire)

/** Agent routes: a key of `API_KEYS`; 401 for no configured key, 403 for a merchant key. */
export class AgentAuthorization extends HttpApiMiddleware.Tag<AgentAuthorization>()("acp/AgentAuthorization", {
  failure: KeyRefused,
  security: {
    agentKey: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An agent platform's API key (`API_KEYS`); a merchant key gets 403")
    )
  }
}) {}

/** Merchant routes: a key of `MERCHANT_API_KEYS`; 401 for no configured key, 403 for an agent key. */
export class MerchantAuthorization extends HttpApiMiddleware.Tag<MerchantAuthorization>()("acp/MerchantAuthorization", {
  failure: KeyRefused,
  security: {
    merchantKey: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "The merchant's API key (`MERCHANT_API_KEYS`); an agent key gets 403"
      )
    )
  }
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

/** The message of a 403 on a route for `kind` keys, in every error object. */
export const forbiddenMessage = (kind: KeyKind): string =>
  kind === "merchant"
    ? "This route takes a merchant API key; an agent API key cannot use it."
    : "This route takes an agent API key; a merchant API key cannot use it."

export const forbidden = (kind: KeyKind) =>
  new Forbidden({ type: "invalid_request", code: "forbidden", message: forbiddenMessage(kind) })

export const apiKeyId = (key: string): string => `key_${sha256(key).subarray(0, 6).toString("hex")}`

/** Read exactly as `HttpApiSecurity.bearer` reads it: everything after the first 7 characters. */
export const bearerTokenOf = (authorization: string | undefined): string =>
  (authorization ?? "").slice("bearer ".length)

/** Shared by every check of a key (routes, idempotency, console), so that all agree on who is calling. */
export const makeKeyResolver = (
  config: Pick<AppConfigShape, "apiKeys" | "merchantApiKeys">
): KeyResolver => {
  const keys = [
    ...config.apiKeys.map((key) => ({ key: Redacted.value(key), kind: "agent" as const })),
    ...config.merchantApiKeys.map((key) => ({ key: Redacted.value(key), kind: "merchant" as const }))
  ].map(({ key, kind }) => ({ hash: sha256(key), client: { keyId: apiKeyId(key), kind } }))
  return (token) => {
    const presented = sha256(token)
    // Compare against every key, without an early exit, so timing says nothing about which matched.
    let match: Client | undefined
    for (const key of keys) {
      if (timingSafeEqual(presented, key.hash) && match === undefined) match = key.client
    }
    return token.length === 0 ? undefined : match
  }
}

/** For a group whose 401 and 403 have an error object of their own: lets through exactly what its authorization does. */
export const makeBearerCheck = <E>(
  kind: KeyKind,
  refusal: (problem: KeyRefusal, request: HttpServerRequest.HttpServerRequest, config: AppConfigShape) => E
) =>
  Effect.map(AppConfig, (config) => {
    const resolve = makeKeyResolver(config)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const problem = keyRefusal(resolve, request, kind)
      return problem === undefined ? Effect.void : Effect.fail(refusal(problem, request, config))
    })
  })

const checkFor = (kind: KeyKind) =>
  makeBearerCheck(kind, (problem) => problem === "unauthorized" ? unauthorized() : forbidden(kind))

export const AuthorizationLive = Layer.merge(
  Layer.effect(AgentAuthorization, Effect.map(checkFor("agent"), (check) => ({ agentKey: () => check }))),
  Layer.effect(MerchantAuthorization, Effect.map(checkFor("merchant"), (check) => ({ merchantKey: () => check })))
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
