/** The tokenize handler and the group's middlewares; every failure is in the request version's error object. */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Either, Layer, Schema } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { answeredWith, type RouteAnswer } from "../../idempotency/idempotent-answer.ts"
import { AppConfig } from "../../platform/config.ts"
import type { BadRequest, PayloadTooLarge } from "../../platform/http/errors.ts"
import { NotFound } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { readJson } from "../../platform/http/request-body.ts"
import { makeRequestSignatureProblem } from "../../platform/http/request-signature.ts"
import { SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, setRetryAfter } from "../../platform/http/retry-after.ts"
import {
  CurrentClient,
  forbiddenMessage,
  makeBearerCheck,
  RequestedApiVersion,
  unauthorized
} from "../../platform/http/security.ts"
import { RateLimiter } from "../../rate-limit/rate-limiter.ts"
import { type ApiVersionName, isApiVersionName } from "../../shared/api-versions.ts"
import { DelegatePaymentResponse } from "../model/delegate-payment.ts"
import type { DelegateValidationFailure } from "../model/validation.ts"
import { Vault } from "../vault.ts"
import { DELEGATE_WIRE } from "../wire/acp/versions.ts"
import {
  DELEGATE_INTERNAL_MESSAGE,
  DELEGATE_UNAVAILABLE_MESSAGE,
  DelegateApi,
  DelegateAuthentication,
  delegateError,
  type DelegateInternalError,
  DelegateRoleEnabled,
  type DelegateServiceUnavailable,
  DelegateSignatureCheck
} from "./api.ts"

export const delegateErrorOf = (version: ApiVersionName, failure: DelegateValidationFailure) =>
  delegateError(
    version,
    failure.status === 400 ? "invalid_request" : "unprocessable",
    failure.error.message,
    failure.error.param
  )

const fromBodyError = (version: ApiVersionName, error: BadRequest | PayloadTooLarge) =>
  delegateError(
    version,
    error._tag === "PayloadTooLarge"
      ? "request_too_large"
      : error.code === "invalid_content_type"
      ? "invalid_content_type"
      : "invalid_json",
    error.message,
    error.param
  )

const fromStorageError = (
  version: ApiVersionName,
  error: StorageError
): Effect.Effect<never, DelegateServiceUnavailable | DelegateInternalError> =>
  error.reason === "unavailable"
    ? Effect.zipRight(
      Effect.zipRight(
        Effect.logError("vault storage unavailable"),
        setRetryAfter(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.delegate)
      ),
      Effect.fail(delegateError(version, "unavailable", DELEGATE_UNAVAILABLE_MESSAGE))
    )
    : Effect.zipRight(
      Effect.logError("vault storage failure", error.cause),
      Effect.fail(delegateError(version, "internal", DELEGATE_INTERNAL_MESSAGE))
    )

const encodeToken = Schema.encodeSync(DelegatePaymentResponse)

/** The 201 with the token (committed with the token, on a claimed request). */
const tokenAnswer: RouteAnswer<DelegatePaymentResponse> = {
  success: (token) => HttpServerResponse.unsafeJson(encodeToken(token), { status: 201 })
}

/** `DELEGATE_RATE_LIMIT_PER_MINUTE` at once, refilled over a minute. */
export const delegateBucket = (perMinute: number) => ({ capacity: perMinute, refillPerSecond: perMinute / 60 })

export const DelegateHandlers = groupHandlers(
  DelegateApi,
  "delegate",
  Effect.fnUntraced(function*(handlers) {
    const vault = yield* Vault
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const bucket = delegateBucket(config.delegateRateLimitPerMinute)
    const tokenize = Effect.fnUntraced(function*(headers: Record<string, string | undefined>) {
      const client = yield* CurrentClient
      const version = yield* RequestedApiVersion
      const codec = DELEGATE_WIRE[version]
      yield* limiter.consume(`delegate_payment:${client.keyId}`, bucket).pipe(
        Effect.catchTag("RateLimited", (limited) =>
          Effect.zipRight(
            setRetryAfter(limited.retryAfterSeconds),
            Effect.fail(
              delegateError(
                version,
                "rate_limited",
                `Too many delegate payment requests; retry after ${limited.retryAfterSeconds} s.`
              )
            )
          ))
      )
      const json = yield* readJson.pipe(
        Effect.mapError((error) => fromBodyError(version, error))
      )
      const now = yield* Clock.currentTimeMillis
      const payment = yield* Either.match(codec.parse(json, now), {
        onLeft: (failure) => Effect.fail(delegateErrorOf(version, failure)),
        onRight: Effect.succeed
      })
      const idempotencyKey = headers["idempotency-key"]
      return yield* vault.tokenize(payment, {
        clientKeyId: client.keyId,
        ...(idempotencyKey !== undefined && idempotencyKey !== "" ? { idempotencyKey } : {})
      }).pipe(
        answeredWith(tokenAnswer),
        Effect.catchTag("StorageError", (error) => fromStorageError(version, error))
      )
    })
    return handlers.handleRaw("tokenize", ({ headers }) => tokenize(headers))
  })
)

const DelegateRoleEnabledLive = Layer.effect(
  DelegateRoleEnabled,
  Effect.map(AppConfig, (config) =>
    config.roles.has("delegate")
      ? Effect.void
      : Effect.fail(
        new NotFound({
          type: "invalid_request",
          code: "not_found",
          message: "No route POST /agentic_commerce/delegate_payment."
        })
      ))
)

/** The version a 401 answers in: the header is checked only after authentication, so it may name none accepted. */
const versionOfHeader = (accepted: ReadonlyArray<ApiVersionName>, header: string | undefined): ApiVersionName =>
  header !== undefined && isApiVersionName(header) && accepted.includes(header) ? header : "2025-09-29"

const DelegateAuthenticationLive = Layer.effect(
  DelegateAuthentication,
  makeBearerCheck("agent", (problem, request, config) => {
    const version = versionOfHeader(config.apiVersions, request.headers["api-version"])
    return problem === "unauthorized"
      ? delegateError(version, "unauthorized", unauthorized().message)
      : delegateError(version, "forbidden", forbiddenMessage("agent"))
  })
)

const DelegateSignatureCheckLive = Layer.effect(
  DelegateSignatureCheck,
  Effect.map(AppConfig, (config) => {
    const problemOf = makeRequestSignatureProblem(config.requestSigningSecrets)
    // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
    return Effect.gen(function*() {
      const problem = yield* problemOf
      if (problem === undefined) return
      const request = yield* HttpServerRequest.HttpServerRequest
      return yield* Effect.fail(
        delegateError(
          versionOfHeader(config.apiVersions, request.headers["api-version"]),
          "invalid_signature",
          problem.message
        )
      )
    })
  })
)

export const DelegateMiddlewareLive = Layer.mergeAll(
  DelegateRoleEnabledLive,
  DelegateAuthenticationLive,
  DelegateSignatureCheckLive
)
