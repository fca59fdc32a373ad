/**
 * Delegate Payment API handler: rate limit per API key, read the body by the common rules
 * (content type, 1 MiB, JSON), decode it with the schema the endpoint declares and validate it
 * with the domain rules at the Clock's time, then tokenize in the vault. Every failure is a typed
 * error of `delegate-api.ts` (or a common one of `errors.ts`); no message carries request values.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect, Either, Layer } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { AppConfig } from "../platform/config.ts"
import { NotFound } from "../platform/http/errors.ts"
import { declaredPayload, parseJson, readJsonText } from "../platform/http/request-body.ts"
import { SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, setRetryAfter } from "../platform/http/retry-after.ts"
import { CurrentClient } from "../platform/http/security.ts"
import { RateLimiter } from "../rate-limit/rate-limiter-service.ts"
import {
  DelegateApi,
  DelegateBadRequest,
  DelegateGroup,
  type DelegateInternalError,
  delegateInternalError,
  DelegateRateLimited,
  DelegateRoleEnabled,
  type DelegateServiceUnavailable,
  delegateServiceUnavailable,
  DelegateUnprocessable
} from "./delegate-api.ts"
import { type DelegateValidationFailure, makeDelegatePaymentParser } from "./delegate-validation.ts"
import { Vault } from "./vault.ts"

/** A domain validation failure → the 400 or 422 error with the same body. */
export const delegateErrorOf = (failure: DelegateValidationFailure): DelegateBadRequest | DelegateUnprocessable => {
  const fields = {
    type: "invalid_request" as const,
    code: "invalid_card" as const,
    message: failure.error.message,
    ...(failure.error.param !== undefined ? { param: failure.error.param } : {})
  }
  return failure.status === 400 ? new DelegateBadRequest(fields) : new DelegateUnprocessable(fields)
}

const fromStorageError = (
  error: StorageError
): Effect.Effect<never, DelegateServiceUnavailable | DelegateInternalError> =>
  error.reason === "unavailable"
    ? Effect.zipRight(
      Effect.zipRight(
        Effect.logError("vault storage unavailable"),
        setRetryAfter(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.delegate)
      ),
      Effect.fail(delegateServiceUnavailable())
    )
    : Effect.zipRight(Effect.logError("vault storage failure", error.cause), Effect.fail(delegateInternalError()))

/** The bucket of one API key: `DELEGATE_RATE_LIMIT_PER_MINUTE` at once, refilled over a minute. */
export const delegateBucket = (perMinute: number) => ({ capacity: perMinute, refillPerSecond: perMinute / 60 })

export const DelegateHandlers = HttpApiBuilder.group(DelegateApi, "delegate", (handlers) =>
  Effect.gen(function*() {
    const vault = yield* Vault
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const bucket = delegateBucket(config.delegateRateLimitPerMinute)
    const parseDelegatePayment = makeDelegatePaymentParser(declaredPayload(DelegateGroup, "tokenize"))
    return handlers.handleRaw("tokenize", ({ headers }) =>
      Effect.gen(function*() {
        const client = yield* CurrentClient
        yield* limiter.consume(`delegate_payment:${client.keyId}`, bucket).pipe(
          Effect.catchTag("RateLimited", (limited) =>
            Effect.zipRight(
              setRetryAfter(limited.retryAfterSeconds),
              Effect.fail(
                new DelegateRateLimited({
                  type: "rate_limit_exceeded",
                  code: "too_many_requests",
                  message: `Too many delegate payment requests; retry after ${limited.retryAfterSeconds} s.`
                })
              )
            ))
        )
        const json = yield* Effect.flatMap(readJsonText, parseJson)
        const now = yield* Clock.currentTimeMillis
        const payment = yield* Either.match(parseDelegatePayment(json, now), {
          onLeft: (failure) => Effect.fail(delegateErrorOf(failure)),
          onRight: Effect.succeed
        })
        const idempotencyKey = headers["idempotency-key"]
        return yield* vault.tokenize(payment, {
          clientKeyId: client.keyId,
          ...(idempotencyKey !== undefined && idempotencyKey !== "" ? { idempotencyKey } : {})
        }).pipe(Effect.catchTag("StorageError", fromStorageError))
      }))
  }))

/** 404 `not_found` unless the "delegate" role is enabled (`ROLES`). */
export const DelegateRoleEnabledLive = Layer.effect(
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
