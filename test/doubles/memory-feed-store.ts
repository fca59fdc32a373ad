/**
 * In-memory `FeedStore` (see `feed-store.ts`): the `feeds` and `feed_products` tables of a
 * `MemoryDatabase`, products keyed by feed and product id, ordered by first upsert.
 */
import { Effect, Layer, Option } from "effect"
import { type Feed, FeedStore, type FeedStoreService, type UpsertOutcome } from "../../src/feeds/feed-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

interface ProductRow {
  readonly feedId: string
  readonly productId: string
  readonly product: unknown
  readonly updatedAt: number
  readonly position: number
}

const clone = <A>(value: A): A => structuredClone(value)

const keyOf = (feedId: string, productId: string) => JSON.stringify([feedId, productId])

export const make: Effect.Effect<FeedStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const feeds = db.table<string, Feed>("feeds")
  const products = db.table<string, ProductRow>("feed_products")
  const counters = db.table<string, number>("counters")
  const productsOf = (feedId: string) =>
    [...products.values()].filter((row) => row.feedId === feedId).sort((a, b) => a.position - b.position)

  return FeedStore.of({
    transaction: db.transaction,
    createFeed: (feed) =>
      db.atomic(() => {
        if (feeds.has(feed.id)) return Effect.die(new Error(`duplicate feed id ${feed.id}`))
        feeds.set(feed.id, clone(feed))
        return Effect.void
      }),
    getFeed: (id) => db.sync(() => Option.map(Option.fromNullable(feeds.get(id)), clone)),
    listProducts: (feedId) => db.sync(() => productsOf(feedId).map((row) => clone(row.product))),
    upsertProducts: (feedId, records, now, maxProducts) =>
      db.sync((): UpsertOutcome => {
        const feed = feeds.get(feedId)
        if (feed === undefined) return { _tag: "FeedNotFound" }
        const ids = new Set(records.map((record) => record.productId))
        const others = productsOf(feedId).filter((row) => !ids.has(row.productId)).length
        if (others + ids.size > maxProducts) return { _tag: "TooManyProducts", maxProducts }
        for (const record of records) {
          const key = keyOf(feedId, record.productId)
          const existing = products.get(key)
          const position = existing?.position ?? (counters.get("feed_products") ?? 0) + 1
          if (existing === undefined) counters.set("feed_products", position)
          products.set(key, {
            feedId,
            productId: record.productId,
            product: clone(record.product),
            updatedAt: now,
            position
          })
        }
        const updated = { ...feed, updatedAt: Math.max(feed.updatedAt, now) }
        feeds.set(feedId, updated)
        return { _tag: "Upserted", feed: clone(updated) }
      })
  })
})

/** The memory feed store on the `MemoryDatabase` in context. */
export const MemoryFeedStore: Layer.Layer<FeedStore, never, MemoryDatabase> = Layer.effect(FeedStore, make)
