/**
 * Publishing the merchant's products to the agent-hosted Feed API of `FEED_API_URL`: the feed is
 * created there once (one process claims the creation), then each product whose feed form changed
 * since its last accepted push is upserted with `PATCH /feeds/{id}/products`, in its latest form.
 * What is due is derived from the committed products (`feed-publication-store.ts`), so a crash loses
 * nothing; a failed push is retried with backoff, and dead-lettered after `MAX_ATTEMPTS` or when the
 * Feed API refuses the product itself. Every product is checked against the 2026-04-17 schema first.
 */
import { Clock, Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { ProductStore } from "../../catalog/product-store.ts"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig, type FeedPublicationConfig } from "../../platform/config.ts"
import { sha256 } from "../../shared/sha256.ts"
import { FeedPublicationStore, type PushState } from "../feed-publication-store.ts"
import {
  FeedPublisher,
  type FeedPublisherShape,
  FeedUnavailable,
  type PublicationStatus,
  type PushReport
} from "../feed-publisher.ts"
import type { Product } from "../wire/acp/v2026-04-17.ts"
import { catalogFeed } from "./catalog-feed.ts"
import { type FeedApiClient, makeFeedApiClient } from "./feed-api-client.ts"
import type { FeedApiError } from "./feed-api-errors.ts"

// The port lives at the feature's root (the console reads it too); named here as well for earlier importers.
export { FeedPublisher, type FeedPublisherShape, FeedUnavailable, type PublicationStatus, type PushReport }

/** Products per `PATCH`: well under the Feed API's own limit, so one slow product set is not one huge request. */
export const PUSH_BATCH = 100
/** Failed pushes of a product before it is dead-lettered. */
export const MAX_ATTEMPTS = 10
/** How long a pusher holds its products (longer than one batch's call with its deadline). */
const LEASE_MS = 60_000
/** After the n-th failure: 5 s, 10 s, 20 s, … at most an hour (the Feed API's `Retry-After` when longer). */
export const backoffMillis = (attempts: number, retryAfterSeconds?: number): number =>
  Math.max(Math.min(5_000 * 2 ** Math.max(attempts - 1, 0), 3_600_000), (retryAfterSeconds ?? 0) * 1000)

/** How often a process looks for a catalog change to publish, and publishes stock changes anyway. */
export const CHANGE_CHECK_INTERVAL = "1 second"
export const RESYNC_INTERVAL = "1 minute"

const describe = (error: FeedApiError): string =>
  error._tag === "FeedApiRejected"
    ? `${error.status} ${error.code ?? ""}${error.param === undefined ? "" : ` at ${error.param}`}: ${error.message}`
    : error.message

export const makeFeedPublisher = Effect.fnUntraced(function*(config: FeedPublicationConfig, client: FeedApiClient) {
  const store = yield* FeedPublicationStore
  const products = yield* ProductStore
  const catalog = yield* Catalog
  const { apiUrl } = config

  const everyProduct = catalogFeed.pipe(
    Effect.provideService(ProductStore, products),
    Effect.provideService(Catalog, catalog)
  )

  const ensureFeed = Effect.gen(function*() {
    const known = yield* store.publication(apiUrl)
    if (Option.isSome(known)) return known.value.feedId
    const now = yield* Clock.currentTimeMillis
    if (!(yield* store.claimCreation(apiUrl, now, LEASE_MS))) {
      return yield* new FeedUnavailable({ message: "another process is creating the feed", elsewhere: true })
    }
    const created = yield* Effect.either(
      client.createFeed(
        config.targetCountry === undefined ? {} : { target_country: config.targetCountry },
        { idempotencyKey: `feed-publication:${sha256(apiUrl).toString("hex", 0, 16)}` }
      )
    )
    if (Either.isLeft(created)) {
      return yield* new FeedUnavailable({ message: `the feed could not be created: ${describe(created.left)}` })
    }
    yield* store.savePublication({
      apiUrl,
      feedId: created.right.id,
      targetCountry: config.targetCountry,
      createdAt: yield* Clock.currentTimeMillis
    })
    yield* Effect.logInfo(`feed ${created.right.id} created at ${apiUrl}`)
    return created.right.id
  })

  /** Sends `batch` (claimed); a refusal of several is sent again one by one, so that only the refused one dies. */
  const send: (
    feedId: string,
    batch: ReadonlyArray<{ readonly product: Product; readonly hash: string }>,
    attemptsOf: (id: string) => number
  ) => Effect.Effect<{ readonly sent: number; readonly failed: number }, StorageError> = Effect.fnUntraced(
    function*(feedId, batch, attemptsOf) {
      const answer = yield* Effect.either(client.upsertProducts(feedId, batch.map((entry) => entry.product)))
      const now = yield* Clock.currentTimeMillis
      if (Either.isRight(answer) && answer.right.accepted) {
        yield* store.pushed(apiUrl, batch.map((entry) => ({ productId: entry.product.id, hash: entry.hash })), now)
        return { sent: batch.length, failed: 0 }
      }
      const error = Either.isLeft(answer) ? answer.left : undefined
      if (error?._tag === "FeedApiRejected" && error.status === 404) {
        // The feed is gone at the Feed API: start over with a new one on the next cycle.
        yield* Effect.logWarning(`feed ${feedId} is no longer at ${apiUrl}: it will be created again`)
        yield* store.dropPublication(apiUrl)
        return { sent: 0, failed: batch.length }
      }
      const refusedItself = error !== undefined && !error.retriable
      if (refusedItself && batch.length > 1) {
        let sent = 0
        let failed = 0
        for (const entry of batch) {
          const one = yield* send(feedId, [entry], attemptsOf)
          sent += one.sent
          failed += one.failed
        }
        return { sent, failed }
      }
      const message = error === undefined ? "the Feed API did not accept the products" : describe(error)
      for (const entry of batch) {
        const attempts = attemptsOf(entry.product.id) + 1
        const dead = refusedItself || attempts >= MAX_ATTEMPTS
        const retryAfter = error?._tag === "FeedApiUnavailable" ? error.retryAfterSeconds : undefined
        yield* store.failed(apiUrl, [entry.product.id], {
          message,
          nextAttemptAt: dead ? undefined : now + backoffMillis(attempts, retryAfter)
        }, now)
      }
      yield* Effect.logWarning(`feed push of ${batch.length} products to ${apiUrl} failed: ${message}`)
      return { sent: 0, failed: batch.length }
    }
  )

  const push = Effect.fnUntraced(function*(force: boolean) {
    const feedId = yield* ensureFeed
    const all = yield* everyProduct
    const states = new Map((yield* store.states(apiUrl)).map((state) => [state.productId, state]))
    const now = yield* Clock.currentTimeMillis
    const attemptsOf = (id: string) => states.get(id)?.attempts ?? 0
    let unchanged = 0
    let deferred = 0
    let failed = 0
    const due: Array<{ readonly product: Product; readonly hash: string }> = []

    for (const entry of all) {
      const id = entry.id
      const state = states.get(id)
      if (state?.deadAt !== undefined) continue
      if (entry._tag === "Invalid") {
        // Never sent: the merchant fixes the product (a new write), or it stays dead.
        const claimed = yield* store.claim(apiUrl, [id], now, LEASE_MS)
        if (claimed.length > 0) {
          yield* store.failed(apiUrl, claimed, { message: entry.reason, nextAttemptAt: undefined }, now)
        }
        failed++
        continue
      }
      if (!force && state?.pushedHash === entry.hash) {
        unchanged++
        continue
      }
      if (!force && state?.nextAttemptAt !== undefined && state.nextAttemptAt > now) {
        deferred++
        continue
      }
      due.push(entry)
    }
    const claimed = new Set(
      yield* store.claim(
        apiUrl,
        due.map((entry) => entry.product.id),
        now,
        LEASE_MS
      )
    )
    deferred += due.length - claimed.size
    let sent = 0
    const mine = due.filter((entry) => claimed.has(entry.product.id))
    for (let i = 0; i < mine.length; i += PUSH_BATCH) {
      const outcome = yield* send(feedId, mine.slice(i, i + PUSH_BATCH), attemptsOf)
      sent += outcome.sent
      failed += outcome.failed
    }
    return { feedId, sent, unchanged, deferred, failed } satisfies PushReport
  })

  const status = Effect.gen(function*() {
    const publication = yield* store.publication(apiUrl)
    const states = yield* store.states(apiUrl)
    const all = yield* everyProduct
    const hashes = new Map(all.flatMap((entry) => (entry._tag === "Invalid" ? [] : [[entry.id, entry.hash]])))
    const dead = states.filter((state) => state.deadAt !== undefined)
    const published = states.filter((state) =>
      state.deadAt === undefined && hashes.get(state.productId) === state.pushedHash
    )
    const publishedIds = new Set(published.map((state) => state.productId))
    const deadIds = new Set(dead.map((state) => state.productId))
    const stateOf = new Map(states.map((state) => [state.productId, state]))
    const pending = all
      .map((entry) => entry.id)
      .filter((id) => !publishedIds.has(id) && !deadIds.has(id))
      .map((id): PushState =>
        stateOf.get(id) ?? {
          productId: id,
          pushedHash: undefined,
          pushedAt: undefined,
          attempts: 0,
          nextAttemptAt: undefined,
          lastError: undefined,
          deadAt: undefined
        }
      )
    return {
      apiUrl,
      feedId: Option.getOrUndefined(Option.map(publication, (p) => p.feedId)),
      products: all.length,
      published: published.length,
      pending,
      dead
    } satisfies PublicationStatus
  })

  return {
    pushAll: push(true),
    pushChanged: push(false),
    status,
    retryDead: store.retry(apiUrl)
  } satisfies FeedPublisherShape
})

/** The publisher of `config.feedPublication` (a process without one has none). */
export const FeedPublisherLive = Layer.effect(
  FeedPublisher,
  Effect.flatMap(AppConfig, (config) =>
    Option.match(config.feedPublication, {
      onNone: () => Effect.succeed(Option.none<FeedPublisherShape>()),
      onSome: (publication) =>
        makeFeedApiClient({ baseUrl: publication.apiUrl, apiKey: publication.apiKey }).pipe(
          Effect.flatMap((client) => makeFeedPublisher(publication, client)),
          Effect.map(Option.some)
        )
    }))
)

/**
 * Each process, once it listens (`server.ts`: the Feed API may be its own): the full product set (retried
 * until the Feed API answers), then what changed,
 * on a catalog change (seen within `CHANGE_CHECK_INTERVAL`) and every `RESYNC_INTERVAL` (stock sold
 * changes a variant's availability without a product write, and failures come due).
 */
export const feedPublisherWorker = Layer.scopedDiscard(
  Effect.gen(function*() {
    const publisher = yield* FeedPublisher
    if (Option.isNone(publisher)) return
    const products = yield* ProductStore
    const logged = <A>(what: string, effect: Effect.Effect<A, FeedUnavailable | StorageError>) =>
      effect.pipe(
        Effect.tap((report) => Effect.logDebug(`feed ${what}`, report)),
        Effect.tapError((error) =>
          error._tag === "FeedUnavailable" && error.elsewhere === true
            ? Effect.logInfo(`feed ${what} waits: ${error.message}`)
            : Effect.logWarning(
              `feed ${what} failed: ${error._tag === "FeedUnavailable" ? error.message : error.reason}`
            )
        )
      )
    yield* logged("push of every product", publisher.value.pushAll).pipe(
      Effect.retry(Schedule.exponential("5 seconds").pipe(Schedule.union(Schedule.spaced("10 minutes")))),
      Effect.zipRight(
        Effect.gen(function*() {
          let version: number | undefined
          let last = yield* Clock.currentTimeMillis
          for (;;) {
            yield* Effect.sleep(CHANGE_CHECK_INTERVAL)
            const seen = yield* Effect.option(products.catalogVersion)
            const now = yield* Clock.currentTimeMillis
            const changed = Option.isSome(seen) && version !== undefined && seen.value !== version
            if (Option.isSome(seen)) version = seen.value
            if (!changed && now - last < Duration.toMillis(RESYNC_INTERVAL)) continue
            last = now
            yield* Effect.ignore(logged("push of changed products", publisher.value.pushChanged))
          }
        })
      ),
      Effect.forkScoped
    )
  })
)
