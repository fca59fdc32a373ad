/**
 * Idempotent POSTs (CONTRACT §6) for every route whose group declares `Idempotent`, wired inside
 * `requestMiddleware`. Which requests are claimed, what is kept and why: `docs/decisions.md`
 * ("Idempotency"); the claim, its lease and crashes: `docs/concurrency.md` ("Idempotency keys").
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Clock, type Context, Effect, Exit, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../../platform/config.ts"
import { FaultInjection, type FaultInjectionShape } from "../../platform/fault-injection.ts"
import { internalError, serviceUnavailable } from "../../platform/http/errors.ts"
import { isValidIdempotencyKey } from "../../platform/http/idempotency-key.ts"
import { errorResponse } from "../../platform/http/middleware.ts"
import { MAX_BODY_BYTES, requestBodyText } from "../../platform/http/request-body-bytes.ts"
import { hasReadableJsonBody } from "../../platform/http/request-body.ts"
import { makeRequestSignatureCheck, RequestSignature } from "../../platform/http/request-signature.ts"
import { IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS, withRetryAfter } from "../../platform/http/retry-after.ts"
import {
  ErrorFamily,
  type ErrorFamilyName,
  Idempotent,
  RequiredIdempotencyKey,
  VersionedIdempotency
} from "../../platform/http/route-declarations.ts"
import { annotation, declares, makeRouteTable, type Route } from "../../platform/http/route-table.ts"
import {
  AgentAuthorization,
  ApiVersion,
  authenticate,
  type KeyKind,
  makeApiVersionCheck,
  makeKeyResolver,
  MerchantAuthorization
} from "../../platform/http/security.ts"
import { deriveVaultKeys } from "../../platform/key-derivation.ts"
import type { ApiVersionName } from "../../shared/api-versions.ts"
import { type ClaimRenewal, startClaimRenewal } from "../claim-renewal.ts"
import { type IdempotencyErrorFlavour, idempotencyErrorsOf } from "../idempotency-errors.ts"
import {
  type IdempotencyRecord,
  type IdempotencyScope,
  IdempotencyStore,
  type IdempotencyStoreService,
  type StoredResponse
} from "../idempotency-store.ts"
import { ClaimedRequest, CurrentClaim, toStoredResponse } from "../idempotent-answer.ts"
import {
  canonicalPath,
  type FingerprintKeys,
  fingerprintMatches,
  isReplayableStatus,
  requestFingerprint
} from "../model/idempotency.ts"
import { FIXED_RULES_VERSION, IDEMPOTENCY_RULES, type IdempotencyFailure } from "../model/rules.ts"

/** How long a claim protects an in-flight request when its process stops renewing it. */
export const IDEMPOTENCY_LEASE_MILLIS = 60_000

export interface IdempotentRoute {
  /** The kind of key the route takes: a request with any other is the route's to refuse, never claimed. */
  readonly keyKind: KeyKind
  readonly family: ErrorFamilyName
  /** The rules (and error objects) are those of the request's API-Version (`VersionedIdempotency`). */
  readonly versioned: boolean
  readonly checksApiVersion: boolean
  readonly checksSignature: boolean
  /** A key on every request, a reused key with another body 409, whatever the version (`RequiredIdempotencyKey`). */
  readonly keyRequired: boolean
}

const declared = <S>(route: Route, tag: Context.Tag<any, S>, otherwise: S): S =>
  Option.getOrElse(annotation(route, tag), () => otherwise)

/** The kind of key a route's authorization takes (its key is the scope), if it declares one. */
const keyKindOf = (route: Route): KeyKind | undefined =>
  declares(route, AgentAuthorization) ? "agent" : declares(route, MerchantAuthorization) ? "merchant" : undefined

/** The methods a route of an `Idempotent` group is covered for: its POSTs, and its PUTs (the Cart API's update). */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["POST", "PUT"])

/** Covered routes by method and path; throws for a group without an authorization (the scope) or a needed `ApiVersion`. */
export const idempotentRoutes = (api: HttpApi.HttpApi.Any) => {
  const table = makeRouteTable(api)
  const covered = new Map<Route, IdempotentRoute>()
  for (const route of table.routes) {
    if (!IDEMPOTENT_METHODS.has(route.method) || !declared(route, Idempotent, false)) continue
    const keyKind = keyKindOf(route)
    if (keyKind === undefined) {
      throw new Error(
        `${route.group} is declared Idempotent but declares neither AgentAuthorization nor MerchantAuthorization ` +
          `(POST ${route.path})`
      )
    }
    const versioned = declared(route, VersionedIdempotency, false)
    if (versioned && !declares(route, ApiVersion)) {
      throw new Error(
        `${route.group} is declared VersionedIdempotency but does not declare ApiVersion (POST ${route.path})`
      )
    }
    covered.set(route, {
      keyKind,
      family: declared(route, ErrorFamily, "checkout"),
      versioned,
      checksApiVersion: declares(route, ApiVersion),
      checksSignature: declares(route, RequestSignature),
      keyRequired: declared(route, RequiredIdempotencyKey, false)
    })
  }
  return (path: string, method = "POST"): IdempotentRoute | undefined => {
    const route = table.find(method, path)
    return route === undefined ? undefined : covered.get(route)
  }
}

interface Answering {
  readonly fingerprintVersion: string | undefined
  readonly keyRequired: boolean
  readonly status: Readonly<Record<IdempotencyFailure, number>>
  readonly errors: IdempotencyErrorFlavour
}

const answering = (route: IdempotentRoute, version: ApiVersionName): Answering => ({
  fingerprintVersion: route.versioned ? version : undefined,
  keyRequired: route.keyRequired || IDEMPOTENCY_RULES[version].keyRequired,
  status: IDEMPOTENCY_RULES[version].status,
  errors: idempotencyErrorsOf[route.family](version)
})

const failureResponse = (rules: Answering, failure: IdempotencyFailure) => {
  const response = HttpServerResponse.unsafeJson(rules.errors(failure), { status: rules.status[failure] })
  return failure === "in_flight" ? withRetryAfter(IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS)(response) : response
}

const fromStored = (stored: StoredResponse): HttpServerResponse.HttpServerResponse => {
  const { "content-type": contentType, ...headers } = stored.headers
  return contentType === undefined && stored.body.length === 0
    ? HttpServerResponse.empty({ status: stored.status, headers })
    : HttpServerResponse.uint8Array(stored.body, {
      status: stored.status,
      headers,
      ...(contentType !== undefined ? { contentType } : {})
    })
}

const replay = (stored: StoredResponse) =>
  HttpServerResponse.setHeader(fromStored(stored), "idempotent-replayed", "true")

const answerFor = (record: IdempotencyRecord, body: string, keys: FingerprintKeys, rules: Answering) =>
  !fingerprintMatches(record.fingerprint, body, keys, rules.fingerprintVersion)
    ? failureResponse(rules, "conflict")
    : record.state === "in_flight"
    ? failureResponse(rules, "in_flight")
    : replay(record.response)

export interface IdempotencyOptions {
  readonly leaseMillis?: number
  readonly renewEveryMillis?: number
}

const newClaimId = () => randomBytes(16).toString("hex")

interface ClaimedRun {
  readonly store: IdempotencyStoreService
  readonly scope: IdempotencyScope
  readonly claimId: string
  readonly timing: { readonly ttlMillis: number }
  readonly renewal: ClaimRenewal
  /** The body was sent as readable JSON: a 400 to any other is not kept, as the client fixes a header. */
  readonly jsonBody: boolean
  readonly faults: FaultInjectionShape
}

const runClaimed = <E, R>(app: HttpApp.Default<E, R>, run: ClaimedRun) => {
  const { claimId, scope, store, timing } = run
  const release = store.release(scope, claimId).pipe(
    Effect.catchAll((error) =>
      // The claim then stays in flight until its lease runs out: a retry gets 409 in_flight until then.
      Effect.logWarning("idempotency key release failed", error.reason)
    )
  )
  const claim = new ClaimedRequest(
    (response) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => store.complete(scope, claimId, response, now + timing.ttlMillis)
      ),
    { scope, claimId, ttlMillis: timing.ttlMillis }
  )
  return run.renewal.whileRunning(scope, claimId, runToSettlement(app, run, claim, release))
}

const runToSettlement = Effect.fnUntraced(function*<E, R>(
  app: HttpApp.Default<E, R>,
  run: ClaimedRun,
  claim: ClaimedRequest,
  release: Effect.Effect<void>
) {
  // Uninterruptible: once claimed, it runs to the end and settles the key, even if the client left.
  const exit = yield* Effect.exit(Effect.uninterruptible(Effect.locally(app, CurrentClaim, claim)))
  if (Exit.isFailure(exit)) {
    // An answer committed with the effect stays: `release` frees only a claim still in flight.
    yield* release
    return yield* Effect.failCause(exit.cause as Cause.Cause<E>)
  }
  yield* Effect.flatMap(HttpServerRequest.HttpServerRequest, run.faults.afterRoute)
  return yield* settle(run, claim, release, exit.value)
})

const settle = Effect.fnUntraced(function*(
  run: ClaimedRun,
  claim: ClaimedRequest,
  release: Effect.Effect<void>,
  response: HttpServerResponse.HttpServerResponse
) {
  if (claim.committed !== undefined) return fromStored(claim.committed.stored)
  const keep = !claim.notNow && isReplayableStatus(response.status) && (run.jsonBody || response.status !== 400)
  const stored = keep ? toStoredResponse(response) : undefined
  if (stored === undefined) {
    yield* release
    return response
  }
  const kept = yield* claim.complete(stored).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning("idempotency result could not be stored", error.reason), false)
    )
  )
  if (!kept) yield* Effect.logWarning("idempotency claim lost before its result was stored")
  return response
})

export const makeIdempotencyMiddleware = Effect.fnUntraced(
  function*(api: HttpApi.HttpApi.Any, options: IdempotencyOptions = {}) {
    const routeOf = idempotentRoutes(api)
    const store = yield* IdempotencyStore
    const config = yield* AppConfig
    const faults = yield* FaultInjection
    const resolveKey = makeKeyResolver(config)
    const apiVersionProblem = makeApiVersionCheck(config.apiVersions)
    const signatureProblem = makeRequestSignatureCheck(config.requestSigningSecrets)
    const fingerprintKeyOf = (key: Redacted.Redacted<string>) =>
      Effect.map(Effect.orDie(deriveVaultKeys(Redacted.value(key))), (keys) => keys.requestFingerprintKey)
    const fingerprintKeys = {
      current: yield* fingerprintKeyOf(config.vaultKey),
      retired: yield* Effect.forEach(config.retiredVaultKeys, fingerprintKeyOf)
    }
    const leaseMillis = options.leaseMillis ?? IDEMPOTENCY_LEASE_MILLIS
    const timing = {
      ttlMillis: config.idempotencyTtlSeconds * 1000,
      leaseMillis,
      // Every third of the lease: two renewals may fail before the lease runs out.
      renewEveryMillis: options.renewEveryMillis ?? Math.max(1, Math.floor(leaseMillis / 3))
    }
    const renewal = yield* startClaimRenewal(store, timing)

    const post = Effect.fnUntraced(
      function*<E, R>(request: HttpServerRequest.HttpServerRequest, app: HttpApp.Default<E, R>) {
        const path = canonicalPath(request.url.split("?")[0]!)
        const route = routeOf(path, request.method)
        if (route === undefined) return yield* app
        const client = authenticate(resolveKey, request)
        // Unauthenticated, or a key of the other kind: the route answers 401 or 403, never stored.
        if (client === undefined || client.kind !== route.keyKind) return yield* app
        const keyId = client.keyId
        const apiVersion = request.headers["api-version"]
        // A versioned route without a version it accepts has no rules to follow: the route answers 400.
        if (route.versioned && apiVersionProblem(apiVersion) !== undefined) return yield* app
        const rules = answering(route, route.versioned ? apiVersion as ApiVersionName : FIXED_RULES_VERSION)
        const key = request.headers["idempotency-key"]
        if (key === undefined) return rules.keyRequired ? failureResponse(rules, "missing_key") : yield* app
        if (!isValidIdempotencyKey(key)) return failureResponse(rules, "invalid_key")
        // Refused for its headers: neither answered from the store nor kept; the corrected retry runs.
        if (route.checksApiVersion && apiVersionProblem(apiVersion) !== undefined) {
          return yield* app
        }

        const declaredLength = Number(request.headers["content-length"] ?? "0")
        if (Number.isFinite(declaredLength) && declaredLength > MAX_BODY_BYTES) return yield* app
        // The handler's own read (same size limit): if it fails, the handler answers 413/400, unclaimed.
        const body = yield* Effect.option(requestBodyText)
        if (Option.isNone(body)) return yield* app
        // Likewise an unsigned or stale request where signatures are required (the route: 401).
        const now = yield* Clock.currentTimeMillis
        if (route.checksSignature && signatureProblem(request.headers, body.value, now) !== undefined) {
          return yield* app
        }

        const fingerprint = requestFingerprint(body.value, fingerprintKeys.current, rules.fingerprintVersion)
        const scope: IdempotencyScope = { keyId, method: request.method, path, key }
        const claimId = newClaimId()
        const leaseUntil = now + timing.leaseMillis
        const outcome = yield* store.claim(scope, {
          fingerprint,
          claimId,
          now,
          leaseUntil,
          expiresAt: Math.max(now + timing.ttlMillis, leaseUntil)
        }).pipe(Effect.either)
        if (outcome._tag === "Left") {
          // Without the store there is no at-most-once: refuse rather than run unguarded.
          yield* Effect.logError("idempotency store error", outcome.left.reason, outcome.left.cause)
          return storageFailureResponse(outcome.left.reason)
        }
        if (outcome.right._tag === "Existing") {
          return answerFor(outcome.right.record, body.value, fingerprintKeys, rules)
        }
        return yield* runClaimed(app, {
          store,
          scope,
          claimId,
          timing,
          renewal,
          jsonBody: hasReadableJsonBody(request.headers),
          faults
        })
      }
    )

    return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
      Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) => IDEMPOTENT_METHODS.has(request.method) ? post(request, app) : app
      )
  }
)

/** Storage failure while claiming: 503 (Retry-After added outside) when unreachable, else 500. */
const storageFailureResponse = (reason: "unavailable" | "failure") =>
  errorResponse(reason === "unavailable" ? serviceUnavailable() : internalError())
