/**
 * The order-event receiver (role `webhook_receiver`) and its read API. Checks run in the order of
 * `docs/order-events.md`, "The receiver": nothing about the payload is answered before the signature
 * holds. A redelivery (same Request-Id or body bytes) is acknowledged without a second effect.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Clock, Effect, Either, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { AppConfig } from "../../platform/config.ts"
import { BadRequest, NotFound, TooManyRequests, Unauthorized } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { errorResponse } from "../../platform/http/middleware.ts"
import { contentTypeProblem, readRawBody } from "../../platform/http/request-body.ts"
import { withRetryAfter } from "../../platform/http/retry-after.ts"
import { requireRole, storageFailure } from "../../platform/http/route-guards.ts"
import { randomId } from "../../platform/ids.ts"
import { makeInProcessRateLimiter } from "../../rate-limit/in-process-rate-limiter.ts"
import type { BucketOptions } from "../../rate-limit/model/token-bucket.ts"
import { RateLimiter } from "../../rate-limit/rate-limiter.ts"
import type { ApiVersionName } from "../../shared/api-versions.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { verifySignature } from "../../shared/hmac-signature.ts"
import type { ReceivedEvent, ReceivedOrder } from "../received-events-store.ts"
import { ReceivedEventsStore } from "../received-events-store.ts"
import { ReceivedOrdersApi, WebhookReceiverApi } from "./api.ts"
import { decodeWebhookEvent, parseWebhookJson } from "./webhook-body.ts"
import { MERCHANT_SIGNATURE_HEADER } from "./webhook.ts"

const requestIdPattern = /^[\x21-\x7e]{1,128}$/

const iso = (ms: number) => new Date(ms).toISOString()

const dataOf = (payload: unknown): unknown =>
  typeof payload === "object" && payload !== null && "data" in payload ? (payload as { data: unknown }).data : payload

const summary = (order: ReceivedOrder) => ({
  order_id: order.orderId,
  status: order.status,
  updated_at: iso(order.updatedAt)
})

export const WebhookReceiverHandlers = groupHandlers(
  WebhookReceiverApi,
  "webhookReceiver",
  Effect.fnUntraced(function*(handlers) {
    const config = yield* AppConfig
    const store = yield* ReceivedEventsStore
    // Unauthenticated until the signature is checked, so a flood must not reach the database: this
    // process's own bucket turns the excess away first; only the rest spends the shared budget.
    const local = yield* makeInProcessRateLimiter()
    const shared = yield* RateLimiter
    const limiter = {
      consume: (key: string, options: BucketOptions) =>
        Effect.zipRight(local.consume(key, options), shared.consume(key, options))
    }
    const secrets = config.webhookReceiverSecrets.map((secret) => Redacted.value(secret))
    const perMinute = config.webhookReceiverRateLimitPerMinute
    const bucket = { capacity: perMinute, refillPerSecond: perMinute / 60 }
    const accepted = new Set<string>(config.apiVersions)

    const receive = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
      yield* requireRole(config, "webhook_receiver")
      const source = Option.getOrElse(request.remoteAddress, () => "unknown")
      const limited = yield* Effect.either(limiter.consume(`webhook_receiver:${source}`, bucket))
      if (Either.isLeft(limited)) {
        return errorResponse(
          new TooManyRequests({
            type: "invalid_request",
            code: "too_many_requests",
            message: "Too many order events; retry after the time in Retry-After."
          })
        ).pipe(withRetryAfter(limited.left.retryAfterSeconds))
      }

      const raw = yield* readRawBody
      const now = yield* Clock.currentTimeMillis
      const verified = verifySignature({
        header: request.headers[MERCHANT_SIGNATURE_HEADER.toLowerCase()],
        rawBody: raw,
        secrets,
        nowSeconds: Math.floor(now / 1000),
        toleranceSeconds: config.webhookToleranceSeconds
      })
      if (Either.isLeft(verified)) {
        yield* Effect.logWarning(`order event rejected: ${verified.left.message}`)
        return yield* new Unauthorized({
          type: "invalid_request",
          code: "invalid_signature",
          message: "Missing or invalid Merchant-Signature."
        })
      }
      const badContentType = contentTypeProblem(request.headers["content-type"])
      if (badContentType !== undefined) return yield* badContentType
      const named = request.headers["api-version"]
      if (named !== undefined && !accepted.has(named)) {
        return yield* new BadRequest({
          type: "invalid_request",
          code: "unsupported_api_version",
          message: `API-Version must be one of ${config.apiVersions.join(", ")}, or absent.`,
          param: "$.headers['API-Version']"
        })
      }
      const decoded = Either.flatMap(
        parseWebhookJson(raw),
        (json) =>
          Either.map(decodeWebhookEvent(json, named as ApiVersionName | undefined), (event) => ({ json, event }))
      )
      if (Either.isLeft(decoded)) {
        const problem = decoded.left
        return yield* new BadRequest({
          type: "invalid_request",
          code: problem.code === "missing" || problem.code === "invalid_json" ? problem.code : "invalid",
          message: problem.message,
          ...(problem.param !== undefined ? { param: problem.param } : {})
        })
      }
      const { event, json } = decoded.right
      const given = request.headers["request-id"]
      const requestId = given !== undefined && requestIdPattern.test(given) ? given : randomId("req_")
      const received: ReceivedEvent = {
        requestId,
        bodyHash: createHash("sha256").update(raw).digest("hex"),
        orderId: event.orderId,
        type: event.type,
        status: event.status,
        payload: json,
        receivedAt: now
      }
      const outcome = yield* Effect.catchAll(store.recordEvent(received), storageFailure)
      yield* Effect.logInfo(
        `order event ${requestId} (${event.type} in ${event.version}, order ${received.orderId}): ${outcome}`
      )
      return { received: true as const, request_id: requestId }
    })
    return handlers.handleRaw("orderEvents", ({ request }) => receive(request))
  })
)

export const ReceivedOrdersHandlers = groupHandlers(
  ReceivedOrdersApi,
  "receivedOrders",
  Effect.fnUntraced(function*(handlers) {
    const store = yield* ReceivedEventsStore
    const gate = requireRole(yield* AppConfig, "webhook_receiver")
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.zipRight(
          gate,
          store.listOrders(urlParams.limit ?? 100).pipe(
            Effect.map((orders) => ({ data: orders.map(summary) })),
            Effect.catchAll(storageFailure)
          )
        ))
      .handle(
        "get",
        Effect.fnUntraced(function*({ path }) {
          yield* gate
          const order = yield* Effect.catchAll(store.getOrder(path.order_id), storageFailure)
          if (Option.isNone(order)) {
            return yield* new NotFound({
              type: "invalid_request",
              code: "not_found",
              message: `No order ${maskCardNumbers(path.order_id)} has been received.`,
              param: "$.order_id"
            })
          }
          const events = yield* Effect.catchAll(store.listEvents(path.order_id), storageFailure)
          return {
            ...summary(order.value),
            order: dataOf(order.value.payload),
            events: events.map((event) => ({
              request_id: event.requestId,
              type: event.type,
              status: event.status,
              received_at: iso(event.receivedAt),
              data: dataOf(event.payload)
            }))
          }
        })
      )
  })
)
