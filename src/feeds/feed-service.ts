/**
 * The hosted Feed API's use cases. A feed belongs to the API key that created it: to any other key it
 * does not exist. Times come from the Effect `Clock`; a creation's answer commits with the feed.
 */
import { Clock, Context, Data, Effect, Either, Layer, Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer.ts"
import { randomId } from "../platform/ids.ts"
import { type Feed, type FeedProductRecord, FeedStore } from "./feed-store.ts"

/** Products one feed may hold. */
export const MAX_PRODUCTS_PER_FEED = 10_000

export class UnknownFeed extends Data.TaggedError("UnknownFeed")<{ readonly id: string }> {}

export class FeedFull extends Data.TaggedError("FeedFull")<{ readonly maxProducts: number }> {}

export interface FeedServiceShape {
  readonly create: (ownerKeyId: string, targetCountry: string | undefined) => Effect.Effect<Feed, StorageError>
  readonly get: (ownerKeyId: string, id: string) => Effect.Effect<Feed, UnknownFeed | StorageError>
  readonly products: (
    ownerKeyId: string,
    id: string
  ) => Effect.Effect<ReadonlyArray<unknown>, UnknownFeed | StorageError>
  /** Inserts or replaces `products` by id; every other product of the feed stays as it was. */
  readonly upsert: (
    ownerKeyId: string,
    id: string,
    products: ReadonlyArray<FeedProductRecord>
  ) => Effect.Effect<Feed, UnknownFeed | FeedFull | StorageError>
}

export class FeedService extends Context.Tag("acp/FeedService")<FeedService, FeedServiceShape>() {}

export const makeFeedService = Effect.map(FeedStore, (store): FeedServiceShape => {
  const owned = (ownerKeyId: string, id: string) =>
    Effect.flatMap(store.getFeed(id), (feed) =>
      Option.isSome(feed) && feed.value.ownerKeyId === ownerKeyId
        ? Effect.succeed(feed.value)
        : Effect.fail(new UnknownFeed({ id })))
  return {
    create: (ownerKeyId, targetCountry) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const feed: Feed = { id: randomId("feed_"), ownerKeyId, targetCountry, updatedAt: now }
        return commitWithAnswer(
          store.transaction,
          Effect.as(store.createFeed(feed), feed),
          (created) => Option.some(Either.right(created))
        )
      }),
    get: owned,
    products: (ownerKeyId, id) => Effect.zipRight(owned(ownerKeyId, id), store.listProducts(id)),
    upsert: Effect.fnUntraced(function*(ownerKeyId: string, id: string, products: ReadonlyArray<FeedProductRecord>) {
      yield* owned(ownerKeyId, id)
      const now = yield* Clock.currentTimeMillis
      const outcome = yield* store.upsertProducts(id, products, now, MAX_PRODUCTS_PER_FEED)
      switch (outcome._tag) {
        case "Upserted":
          return outcome.feed
        case "FeedNotFound":
          return yield* new UnknownFeed({ id })
        case "TooManyProducts":
          return yield* new FeedFull({ maxProducts: outcome.maxProducts })
      }
    })
  }
})

export const FeedServiceLive: Layer.Layer<FeedService, never, FeedStore> = Layer.effect(FeedService, makeFeedService)
