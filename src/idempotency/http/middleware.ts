/**
 * Idempotent POSTs (CONTRACT §6), for every route whose group declares `Idempotent`
 * (`src/platform/http/route-declarations.ts`) at once: one `HttpApp` middleware, wired in
 * `src/app/http-app.ts` inside `requestMiddleware` (so Request-Id stays per request). The routes
 * and what their groups declare are read once at start from the assembled API (`idempotentRoutes`):
 * a group added with `Idempotent` gets it without doing anything else.
 *
 * The rules are those of one API version (`idempotency/model/rules.ts`): the request's `API-Version` on
 * the routes of groups that declare `VersionedIdempotency` (the ACP APIs), else the interface
 * document's whatever the header says. The errors below are in the error object of the group's
 * `ErrorFamily`, in that version (`idempotency-errors.ts`).
 *
 * For a POST made with a valid API key on such a route:
 * 1. on a versioned route, a request whose API-Version the route refuses is passed to the route
 *    unclaimed (it answers 400): without a version there are no rules to apply;
 * 2. without an `Idempotency-Key`: 400 `missing_key` where the version requires one, else the route
 *    runs unprotected; a key must be 1–255 printable ASCII characters, else 400 (`param`
 *    `$.headers['Idempotency-Key']`);
 * 3. a request the route refuses for its headers (API-Version where the group declares `ApiVersion`;
 *    the request signature where it declares `RequestSignature`) is passed to the route unclaimed:
 *    never answered from the store, never kept; the checks are the ones those middlewares run;
 * 4. the body is read (the same read the handler gets later) and fingerprinted
 *    (`requestFingerprint`: HMAC-SHA256 under a key derived from VAULT_KEY, over canonical JSON,
 *    or over the bytes when not JSON; on a versioned route, together with the API-Version);
 * 5. the key is claimed atomically in `IdempotencyStore`, scoped to (API key id, method, path
 *    with canonical percent-encoding):
 *    - claimed → the route runs; its result is stored (2xx–4xx) or the key released (5xx, 429, 401:
 *      `isReplayableStatus`; a 400 to a body not sent as JSON; an answer its handler marked "not
 *      now", `answerIsNotNow`), so a retry runs again;
 *    - a record with another fingerprint (another body, or another API-Version) → `conflict`
 *      (409, or 422 from 2026-04-17);
 *    - in flight → 409 `in_flight` with `Retry-After`;
 *    - completed → the stored status, headers and body again, with `Idempotent-Replayed: true`.
 * Requests without a valid API key pass through untouched (authentication answers 401) and are
 * never stored. The outer `requestMiddleware` echoes a valid `Idempotency-Key` on every response.
 *
 * The claim is an `in_flight` record with a lease (`IDEMPOTENCY_LEASE_MILLIS`), renewed while the
 * route runs, and in `CurrentClaim` while it runs: a use case that writes stores its answer in the
 * transaction of its write (`idempotency/idempotent-answer.ts`), so a crash after that commit is
 * replayed. If the process dies before it, the key stays in flight until the lease runs out; then
 * a retry with the same body takes it over and runs the route again. Per route and crash point:
 * `docs/concurrency.md` ("Idempotency keys").
 * A claimed request is not interrupted when its client goes away: it runs to the end so that its
 * result is stored for the retry.
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
  VersionedIdempotency
} from "../../platform/http/route-declarations.ts"
import { annotation, declares, makeRouteTable, type Route } from "../../platform/http/route-table.ts"
import {
  ApiVersion,
  authenticate,
  Authorization,
  makeApiKeyResolver,
  makeApiVersionCheck
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

// ---------------------------------------------------------------------------------------------
// Which routes

/** What the idempotency middleware needs to know of a covered route. */
export interface IdempotentRoute {
  /** The error object the route's group answers in (`ErrorFamily`; the checkout one by default). */
  readonly family: ErrorFamilyName
  /** The rules (and error objects) are the request's API-Version's (`VersionedIdempotency`). */
  readonly versioned: boolean
  /** The route's group checks `API-Version` (`ApiVersion`). */
  readonly checksApiVersion: boolean
  /** The route's group checks request signatures (`RequestSignature`). */
  readonly checksSignature: boolean
}

const declared = <S>(route: Route, tag: Context.Tag<any, S>, otherwise: S): S =>
  Option.getOrElse(annotation(route, tag), () => otherwise)

/**
 * The POST routes whose group declares `Idempotent`, with the checks, the error family and the
 * rules the group declares. The key's scope is the caller's API key, so an idempotent group must
 * declare `Authorization`, and rules that follow the API-Version need its `ApiVersion`: a group
 * that does not is refused at start.
 */
export const idempotentRoutes = (api: HttpApi.HttpApi.Any) => {
  const table = makeRouteTable(api)
  const covered = new Map<Route, IdempotentRoute>()
  for (const route of table.routes) {
    if (route.method !== "POST" || !declared(route, Idempotent, false)) continue
    if (!declares(route, Authorization)) {
      throw new Error(`${route.group} is declared Idempotent but does not declare Authorization (POST ${route.path})`)
    }
    const versioned = declared(route, VersionedIdempotency, false)
    if (versioned && !declares(route, ApiVersion)) {
      throw new Error(
        `${route.group} is declared VersionedIdempotency but does not declare ApiVersion (POST ${route.path})`
      )
    }
    covered.set(route, {
      family: declared(route, ErrorFamily, "checkout"),
      versioned,
      checksApiVersion: declares(route, ApiVersion),
      checksSignature: declares(route, RequestSignature)
    })
  }
  return (path: string): IdempotentRoute | undefined => {
    const route = table.find("POST", path)
    return route === undefined ? undefined : covered.get(route)
  }
}

// ---------------------------------------------------------------------------------------------
// Responses

/** The rules and error objects a request follows: those of one API version, in its route's family. */
interface Answering {
  /** The version is part of the fingerprint (a versioned route). */
  readonly fingerprintVersion: string | undefined
  readonly keyRequired: boolean
  readonly status: Readonly<Record<IdempotencyFailure, number>>
  readonly errors: IdempotencyErrorFlavour
}

const answering = (route: IdempotentRoute, version: ApiVersionName): Answering => ({
  fingerprintVersion: route.versioned ? version : undefined,
  keyRequired: IDEMPOTENCY_RULES[version].keyRequired,
  status: IDEMPOTENCY_RULES[version].status,
  errors: idempotencyErrorsOf[route.family](version)
})

const failureResponse = (rules: Answering, failure: IdempotencyFailure) => {
  const response = HttpServerResponse.unsafeJson(rules.errors(failure), { status: rules.status[failure] })
  return failure === "in_flight" ? withRetryAfter(IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS)(response) : response
}

/** The stored response as sent; a replay adds `Idempotent-Replayed: true`. */
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

/** What an existing live record means for a request with `body`. */
const answerFor = (record: IdempotencyRecord, body: string, keys: FingerprintKeys, rules: Answering) =>
  !fingerprintMatches(record.fingerprint, body, keys, rules.fingerprintVersion)
    ? failureResponse(rules, "conflict")
    : record.state === "in_flight"
    ? failureResponse(rules, "in_flight")
    : replay(record.response)

// ---------------------------------------------------------------------------------------------
// The middleware

export interface IdempotencyOptions {
  readonly leaseMillis?: number
  readonly renewEveryMillis?: number
}

const newClaimId = () => randomBytes(16).toString("hex")

/** What a claimed request's run needs besides the app. */
interface ClaimedRun {
  readonly store: IdempotencyStoreService
  readonly scope: IdempotencyScope
  readonly claimId: string
  readonly timing: { readonly ttlMillis: number }
  /** Keeps the claim's lease alive while the route runs. */
  readonly renewal: ClaimRenewal
  /**
   * Whether the request said its body is JSON, unencoded (`hasReadableJsonBody`). A 400 to a
   * request that did not is not kept: it is most likely the route refusing the content type or
   * coding, which the client fixes in a header.
   */
  readonly jsonBody: boolean
  readonly faults: FaultInjectionShape
}

/**
 * Runs the claimed request with its `ClaimedRequest` in `CurrentClaim`, then settles the key: an
 * answer the use case committed with its effect is the response, already stored; any other answer
 * is stored now (2xx–4xx, `isReplayableStatus`, unless marked "not now") or the key released.
 */
const runClaimed = <E, R>(app: HttpApp.Default<E, R>, run: ClaimedRun) => {
  const { claimId, scope, store, timing } = run
  const release = store.release(scope, claimId).pipe(
    Effect.catchAll((error) =>
      // The claim then stays in flight until its lease runs out; a retry gets 409 in_flight until then.
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

/** The claimed run itself (`runClaimed`): the app, then the key settled on its outcome. */
const runToSettlement = Effect.fnUntraced(function*<E, R>(
  app: HttpApp.Default<E, R>,
  run: ClaimedRun,
  claim: ClaimedRequest,
  release: Effect.Effect<void>
) {
  // Uninterruptible: once claimed, run to the end and settle the key, even if the client left.
  const exit = yield* Effect.exit(Effect.uninterruptible(Effect.locally(app, CurrentClaim, claim)))
  if (Exit.isFailure(exit)) {
    // A failure of the app (unknown route, defect) becomes 404/405/500 outside. An answer
    // committed with the effect stays (release only frees a claim still in flight).
    yield* release
    return yield* Effect.failCause(exit.cause as Cause.Cause<E>)
  }
  yield* Effect.flatMap(HttpServerRequest.HttpServerRequest, run.faults.afterRoute)
  return yield* settle(run, claim, release, exit.value)
})

/** The app's answer to a claimed request, with the key settled by it (see `runClaimed`). */
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

/**
 * Builds the idempotency middleware for the routes of `api` from the store and the configuration
 * (API keys for the scope, `idempotencyTtlSeconds` for the expiry).
 */
export const makeIdempotencyMiddleware = Effect.fnUntraced(
  function*(api: HttpApi.HttpApi.Any, options: IdempotencyOptions = {}) {
    const routeOf = idempotentRoutes(api)
    const store = yield* IdempotencyStore
    const config = yield* AppConfig
    const faults = yield* FaultInjection
    const resolveKeyId = makeApiKeyResolver(config.apiKeys)
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
      // Renewed every third of the lease: two renewals may fail before the lease runs out.
      renewEveryMillis: options.renewEveryMillis ?? Math.max(1, Math.floor(leaseMillis / 3))
    }
    const renewal = yield* startClaimRenewal(store, timing)

    const post = Effect.fnUntraced(
      function*<E, R>(request: HttpServerRequest.HttpServerRequest, app: HttpApp.Default<E, R>) {
        const path = canonicalPath(request.url.split("?")[0]!)
        const route = routeOf(path)
        if (route === undefined) return yield* app
        const keyId = authenticate(resolveKeyId, request)?.keyId
        // Unauthenticated: not ours to answer (401 from the route) and never stored.
        if (keyId === undefined) return yield* app
        const apiVersion = request.headers["api-version"]
        // A versioned route without a version it accepts has no rules to follow: the route answers 400.
        if (route.versioned && apiVersionProblem(apiVersion) !== undefined) return yield* app
        const rules = answering(route, route.versioned ? apiVersion as ApiVersionName : FIXED_RULES_VERSION)
        const key = request.headers["idempotency-key"]
        if (key === undefined) return rules.keyRequired ? failureResponse(rules, "missing_key") : yield* app
        if (!isValidIdempotencyKey(key)) return failureResponse(rules, "invalid_key")
        // A request the route refuses for its headers is neither answered from the store nor kept
        // in it: the route answers 400, and the corrected retry runs.
        if (route.checksApiVersion && apiVersionProblem(apiVersion) !== undefined) {
          return yield* app
        }

        const declaredLength = Number(request.headers["content-length"] ?? "0")
        if (Number.isFinite(declaredLength) && declaredLength > MAX_BODY_BYTES) return yield* app
        // The same read the handler gets (`request-body-bytes.ts`, same size limit); if it fails,
        // the handler answers (413/400) and nothing is claimed.
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
          // Without the store we cannot promise at-most-once: refuse rather than run unguarded.
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

    // Every request passes through here: those that are not POSTs go on without a generator.
    return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
      Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) => request.method !== "POST" ? app : post(request, app)
      )
  }
)

/** Storage failure while claiming: 503 (Retry-After added outside) when unreachable, else 500. */
const storageFailureResponse = (reason: "unavailable" | "failure") =>
  errorResponse(reason === "unavailable" ? serviceUnavailable() : internalError())
