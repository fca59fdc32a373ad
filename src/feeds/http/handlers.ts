/**
 * The hosted Feed API's handlers (role `webhook_receiver`). Each request spends a token of its API key's
 * budget before its body is read; bodies follow the common rules (`request-body.ts`), then the feed's
 * schemas strictly (`feed-validation.ts`).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Layer } from "effect"
import { answeredWith, answerIsNotNow } from "../../idempotency/idempotent-answer.ts"
import { AppConfig } from "../../platform/config.ts"
import { TooManyRequests } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { readJson } from "../../platform/http/request-body.ts"
import { setRetryAfter } from "../../platform/http/retry-after.ts"
import { requireRole, storageFailure } from "../../platform/http/route-guards.ts"
import { CurrentClient } from "../../platform/http/security.ts"
import { RateLimiter } from "../../rate-limit/rate-limiter.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { type FeedFull, FeedService, type UnknownFeed } from "../feed-service.ts"
import type { Feed } from "../feed-store.ts"
import { validateCreateFeed, validateUpsertRequest } from "../wire/acp/feed-validation.ts"
import { FEED_API_VERSION, type FeedMetadata } from "../wire/acp/v2026-04-17.ts"
import { FeedApiVersion, FeedBadRequest, FeedNotFoundError, FeedsApi } from "./api.ts"

export const feedMetadata = (feed: Feed): FeedMetadata => ({
  id: feed.id,
  ...(feed.targetCountry === undefined ? {} : { target_country: feed.targetCountry }),
  updated_at: new Date(feed.updatedAt).toISOString()
})

const notFound = (error: UnknownFeed) =>
  Effect.fail(
    new FeedNotFoundError({
      type: "invalid_request",
      code: "feed_not_found",
      message: `Feed ${maskCardNumbers(error.id)} not found.`,
      param: "$.id"
    })
  )

const full = (error: FeedFull) =>
  Effect.fail(
    new FeedBadRequest({
      type: "invalid_request",
      code: "too_many_products",
      message: `A feed holds at most ${error.maxProducts} products; this upsert would exceed it.`,
      param: "$.products"
    })
  )

export const FeedsHandlers = groupHandlers(
  FeedsApi,
  "feeds",
  Effect.fnUntraced(function*(handlers) {
    const service = yield* FeedService
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const gate = requireRole(config, "webhook_receiver")
    const perMinute = config.feedRateLimitPerMinute
    const bucket = { capacity: perMinute, refillPerSecond: perMinute / 60 }

    const admitted = Effect.gen(function*() {
      yield* gate
      const client = yield* CurrentClient
      yield* limiter.consume(`feeds:${client.keyId}`, bucket).pipe(
        Effect.catchTag("RateLimited", (limited) =>
          Effect.zipRight(
            setRetryAfter(limited.retryAfterSeconds),
            Effect.fail(
              new TooManyRequests({
                type: "invalid_request",
                code: "too_many_requests",
                message: `Too many Feed API requests; retry after ${limited.retryAfterSeconds} s.`
              })
            )
          ))
      )
      return client
    })

    const created = {
      success: (feed: Feed) => HttpServerResponse.unsafeJson(feedMetadata(feed), { status: 201 })
    }

    return handlers
      .handleRaw(
        "createFeed",
        Effect.fnUntraced(function*() {
          const client = yield* admitted
          const body = validateCreateFeed(yield* readJson)
          if (Either.isLeft(body)) {
            return yield* new FeedBadRequest({
              type: "invalid_request",
              code: body.left.targetCountry ? "invalid_target_country" : "invalid",
              message: body.left.targetCountry
                ? "target_country must be an ISO 3166-1 alpha-2 code"
                : body.left.message,
              param: body.left.param
            })
          }
          return yield* service.create(client.keyId, body.right.target_country).pipe(
            answeredWith(created),
            Effect.catchTag("StorageError", storageFailure)
          )
        })
      )
      .handle(
        "getFeed",
        Effect.fnUntraced(function*({ path }) {
          const client = yield* admitted
          const feed = yield* service.get(client.keyId, path.id).pipe(
            Effect.catchTags({ UnknownFeed: notFound, StorageError: storageFailure })
          )
          return feedMetadata(feed)
        })
      )
      .handleRaw(
        "getFeedProducts",
        Effect.fnUntraced(function*({ path }) {
          const client = yield* admitted
          const products = yield* service.products(client.keyId, path.id).pipe(
            Effect.catchTags({ UnknownFeed: notFound, StorageError: storageFailure })
          )
          // Stored as validated `Product`s: answered as they are, without a schema pass per product.
          return HttpServerResponse.unsafeJson({ products })
        })
      )
      .handleRaw(
        "upsertFeedProducts",
        Effect.fnUntraced(function*({ path }) {
          const client = yield* admitted
          const products = validateUpsertRequest(yield* readJson)
          if (Either.isLeft(products)) {
            return yield* new FeedBadRequest({
              type: "invalid_request",
              code: "invalid_product_payload",
              message: products.left.message,
              param: products.left.param
            })
          }
          const records = products.right.map((product) => ({ productId: product.id, product }))
          const feed = yield* service.upsert(client.keyId, path.id, records).pipe(
            Effect.catchTags({ UnknownFeed: notFound, FeedFull: full, StorageError: storageFailure })
          )
          return HttpServerResponse.unsafeJson({ id: feed.id, accepted: true })
        })
      )
  })
)

const versionError = (code: "missing_api_version" | "unsupported_api_version", message: string) =>
  new FeedBadRequest({ type: "invalid_request", code, message, param: "$.headers['API-Version']" })

/**
 * 2026-04-17, when the deployment accepts it (`API_VERSIONS`). A refusal is never kept under the
 * request's Idempotency-Key, so the same key with the right version runs.
 */
export const FeedApiVersionLive = Layer.effect(
  FeedApiVersion,
  Effect.map(AppConfig, (config) => {
    const served = config.apiVersions.includes(FEED_API_VERSION)
    const unsupported = versionError(
      "unsupported_api_version",
      served
        ? `The Feed API is defined by API-Version ${FEED_API_VERSION} only.`
        : `The Feed API is defined by API-Version ${FEED_API_VERSION}, which this deployment does not accept.`
    )
    const missing = versionError("missing_api_version", "The API-Version header is required.")
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const version = request.headers["api-version"]
      if (version === FEED_API_VERSION && served) return Effect.void
      const refusal = version === undefined || version.trim() === "" ? missing : unsupported
      return Effect.zipRight(answerIsNotNow, Effect.fail(refusal))
    })
  })
)
