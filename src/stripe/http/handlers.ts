/**
 * `POST /stripe/webhooks`. Checks in this order: the route is on (role `checkout` and
 * STRIPE_WEBHOOK_SECRET set, else the router's 404), the rate limit, the body size, the signature
 * over the raw bytes (the SDK's `constructEvent`, its default tolerance, our clock), the content
 * type. Nothing is stored before the signature holds. Stripe unreachable while the event is
 * handled is a 503: Stripe delivers the event again later.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Clock, Effect, Either, Option, Redacted } from "effect"
import Stripe from "stripe"
import { AppConfig } from "../../platform/config.ts"
import { BadRequest, ServiceUnavailable, TooManyRequests } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { errorResponse } from "../../platform/http/middleware.ts"
import { contentTypeProblem, readRawBody } from "../../platform/http/request-body.ts"
import { SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, withRetryAfter } from "../../platform/http/retry-after.ts"
import { requireRole, storageFailure } from "../../platform/http/route-guards.ts"
import { makeInProcessRateLimiter } from "../../rate-limit/in-process-rate-limiter.ts"
import type { BucketOptions } from "../../rate-limit/model/token-bucket.ts"
import { RateLimiter } from "../../rate-limit/rate-limiter.ts"
import { StripeWebhooks } from "../stripe-webhooks.ts"
import { StripeWebhooksApi } from "./api.ts"

/** Verifies and parses an event; the SDK's message is kept for the log only. */
const verified = (
  raw: Uint8Array,
  header: string | undefined,
  secret: string,
  nowMillis: number
): Either.Either<Stripe.Event, { readonly stale: boolean; readonly detail: string; readonly json: boolean }> => {
  if (header === undefined || header === "") return Either.left({ stale: false, detail: "no header", json: false })
  try {
    // Default tolerance (300 s): `undefined` keeps the SDK's own.
    return Either.right(
      Stripe.webhooks.constructEvent(Buffer.from(raw), header, secret, undefined, undefined, nowMillis)
    )
  } catch (error) {
    const detail = error instanceof Error ? error.message.split("\n")[0]! : String(error)
    return Either.left({
      stale: detail.includes("tolerance"),
      detail,
      json: error instanceof SyntaxError
    })
  }
}

export const StripeWebhooksHandlers = groupHandlers(
  StripeWebhooksApi,
  "stripeWebhooks",
  Effect.fnUntraced(function*(handlers) {
    const config = yield* AppConfig
    const webhooks = yield* StripeWebhooks
    // Unauthenticated until the signature holds: this process's bucket turns a flood away first.
    const local = yield* makeInProcessRateLimiter()
    const shared = yield* RateLimiter
    const perMinute = config.webhookReceiverRateLimitPerMinute
    const bucket: BucketOptions = { capacity: perMinute, refillPerSecond: perMinute / 60 }
    const secret = Option.getOrElse(Option.map(config.stripe.webhookSecret, Redacted.value), () => "")
    // Off without a signing secret: no event could be verified (`requireRole` of no role is the router's 404).
    const gate = secret === "" ? requireRole(config) : requireRole(config, "checkout")

    const receive = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
      yield* gate
      const source = Option.getOrElse(request.remoteAddress, () => "unknown")
      const limited = yield* Effect.either(
        Effect.zipRight(
          local.consume(`stripe_webhooks:${source}`, bucket),
          shared.consume(`stripe_webhooks:${source}`, bucket)
        )
      )
      if (Either.isLeft(limited)) {
        return errorResponse(
          new TooManyRequests({
            type: "invalid_request",
            code: "too_many_requests",
            message: "Too many Stripe events; retry after the time in Retry-After."
          })
        ).pipe(withRetryAfter(limited.left.retryAfterSeconds))
      }
      const raw = yield* readRawBody
      const now = yield* Clock.currentTimeMillis
      const event = verified(raw, request.headers["stripe-signature"], secret, now)
      if (Either.isLeft(event)) {
        if (event.left.json) {
          return yield* new BadRequest({
            type: "invalid_request",
            code: "invalid_json",
            message: "The body is not JSON."
          })
        }
        yield* Effect.logWarning(`Stripe event rejected: ${event.left.detail}`)
        return yield* new BadRequest({
          type: "invalid_request",
          code: "invalid_signature",
          message: event.left.stale
            ? "The Stripe-Signature timestamp is outside the tolerance: the event is too old."
            : "Missing or invalid Stripe-Signature."
        })
      }
      const badContentType = contentTypeProblem(request.headers["content-type"])
      if (badContentType !== undefined) return yield* badContentType
      const outcome = yield* webhooks.receive(event.right).pipe(
        Effect.catchTags({
          StorageError: storageFailure,
          StripeCardError: () => unavailable,
          StripeRequestRefused: () => unavailable,
          StripeIdempotencyConflict: () => unavailable,
          StripeMisconfigured: () => unavailable,
          StripeUnavailable: () => unavailable
        })
      )
      return { received: true as const, outcome }
    })
    return handlers.handleRaw("receive", ({ request }) => receive(request))
  })
)

/** What Stripe is asked while handling an event failed: Stripe's next delivery retries it. */
const unavailable = Effect.zipRight(
  Effect.logWarning("Stripe event not handled: Stripe could not be asked; it will be delivered again"),
  Effect.fail(
    new ServiceUnavailable({
      type: "service_unavailable",
      code: "service_unavailable",
      message:
        `Stripe could not be reached while handling the event; retry in ${SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.checkout} s.`
    })
  )
)
