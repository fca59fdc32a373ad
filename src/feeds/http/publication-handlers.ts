/** Handlers of the merchant's feed publication routes (role `checkout`, merchant keys). */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Option } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { ProductStore } from "../../catalog/product-store.ts"
import { AppConfig } from "../../platform/config.ts"
import { NotFound, ServiceUnavailable } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { requireRole, storageFailure } from "../../platform/http/route-guards.ts"
import type { PushState } from "../feed-publication-store.ts"
import { FeedPublisher, type FeedUnavailable, type PushReport } from "../feed-publisher.ts"
import { catalogFeed } from "./catalog-feed.ts"
import { FeedPublicationApi } from "./publication-api.ts"

const iso = (millis: number) => new Date(millis).toISOString()

const stateView = (state: PushState) => ({
  product_id: state.productId,
  attempts: state.attempts,
  ...(state.lastError === undefined ? {} : { last_error: state.lastError }),
  ...(state.nextAttemptAt === undefined ? {} : { next_attempt_at: iso(state.nextAttemptAt) }),
  ...(state.deadAt === undefined ? {} : { dead_at: iso(state.deadAt) }),
  ...(state.pushedAt === undefined ? {} : { pushed_at: iso(state.pushedAt) })
})

const reportView = (report: PushReport) => ({
  feed_id: report.feedId,
  sent: report.sent,
  unchanged: report.unchanged,
  deferred: report.deferred,
  failed: report.failed
})

const notConfigured = new NotFound({
  type: "invalid_request",
  code: "not_found",
  message: "No Feed API to publish to: FEED_API_URL is off (or unset in production); set it and FEED_API_KEY.",
  param: "$"
})

const unavailable = (error: FeedUnavailable) =>
  Effect.fail(
    new ServiceUnavailable({
      type: "service_unavailable",
      code: "service_unavailable",
      message: `The feed could not be published: ${error.message}.`,
      param: "$"
    })
  )

export const FeedPublicationHandlers = groupHandlers(
  FeedPublicationApi,
  "feedPublication",
  Effect.fnUntraced(function*(handlers) {
    const config = yield* AppConfig
    const gate = requireRole(config, "checkout")
    const publisher = yield* FeedPublisher
    const products = yield* ProductStore
    const catalog = yield* Catalog
    const configured = Option.match(publisher, {
      onNone: () => Effect.fail(notConfigured),
      onSome: Effect.succeed
    })
    const exported = catalogFeed.pipe(
      Effect.provideService(ProductStore, products),
      Effect.provideService(Catalog, catalog)
    )
    return handlers
      .handle(
        "status",
        Effect.fnUntraced(function*() {
          yield* gate
          const feeds = yield* configured
          const status = yield* Effect.catchAll(feeds.status, storageFailure)
          return {
            api_url: status.apiUrl,
            feed_id: status.feedId ?? null,
            products: status.products,
            published: status.published,
            pending: status.pending.map(stateView),
            dead: status.dead.map(stateView)
          }
        })
      )
      .handle(
        "push",
        Effect.fnUntraced(function*() {
          yield* gate
          const feeds = yield* configured
          const report = yield* feeds.pushAll.pipe(
            Effect.catchTags({ FeedUnavailable: unavailable, StorageError: storageFailure })
          )
          return reportView(report)
        })
      )
      .handle(
        "retry",
        Effect.fnUntraced(function*() {
          yield* gate
          const feeds = yield* configured
          return { retried: yield* Effect.catchAll(feeds.retryDead, storageFailure) }
        })
      )
      .handle(
        "export",
        Effect.fnUntraced(function*() {
          yield* gate
          const entries = yield* Effect.catchAll(exported, storageFailure)
          const feedId = yield* Option.match(publisher, {
            onNone: () => Effect.succeed(Option.none<string>()),
            onSome: (feeds) =>
              Effect.map(Effect.catchAll(feeds.status, storageFailure), (s) => Option.fromNullable(s.feedId))
          })
          const now = yield* Clock.currentTimeMillis
          const target = Option.getOrUndefined(
            Option.flatMap(config.feedPublication, (p) => Option.fromNullable(p.targetCountry))
          )
          return HttpServerResponse.unsafeJson({
            metadata: {
              id: Option.getOrElse(feedId, () => "feed_export"),
              ...(target === undefined ? {} : { target_country: target }),
              updated_at: new Date(now).toISOString()
            },
            products: entries.flatMap((entry) => (entry._tag === "Valid" ? [entry.product] : [])),
            invalid: entries.flatMap((
              entry
            ) => (entry._tag === "Invalid" ? [{ product_id: entry.id, reason: entry.reason }] : []))
          })
        })
      )
  })
)
