/**
 * The contract of `FeedStore`, run against every implementation. Each case makes feeds of its own
 * (fresh ids), so the cases share one store.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { type Feed, FeedStore } from "../../src/feeds/feed-store.ts"

const T0 = Date.parse("2026-04-20T12:00:00.000Z")

const newFeed = (overrides: Partial<Feed> = {}): Feed => ({
  id: `feed_${randomBytes(8).toString("hex")}`,
  ownerKeyId: "key_0123456789ab",
  targetCountry: "US",
  updatedAt: T0,
  ...overrides
})

const product = (id: string, title: string) => ({
  productId: id,
  product: { id, title, variants: [{ id: `${id}-v1`, title: `${title} v1`, price: { amount: 100, currency: "USD" } }] }
})

export const feedStoreContract = (name: string, store: Layer.Layer<FeedStore, unknown>) =>
  layer(store, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("a created feed reads back; an unknown id reads none; an id cannot be created twice", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        const feed = newFeed()
        yield* store.createFeed(feed)
        expect(yield* store.getFeed(feed.id)).toEqual(Option.some(feed))
        const bare = newFeed({ targetCountry: undefined })
        yield* store.createFeed(bare)
        expect(yield* store.getFeed(bare.id)).toEqual(Option.some(bare))
        expect(yield* store.getFeed("feed_unknown")).toEqual(Option.none())
        const again = yield* Effect.exit(store.createFeed({ ...feed, ownerKeyId: "key_other" }))
        expect(again._tag).toBe("Failure")
        expect(Option.getOrThrow(yield* store.getFeed(feed.id)).ownerKeyId).toBe(feed.ownerKeyId)
      }))

    it.effect("upserts insert or replace by product id, leave the others, keep first-upsert order", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        const feed = newFeed()
        yield* store.createFeed(feed)
        expect(yield* store.listProducts(feed.id)).toEqual([])
        const first = yield* store.upsertProducts(feed.id, [product("b", "B"), product("a", "A")], T0 + 1000, 10)
        expect(first).toEqual({ _tag: "Upserted", feed: { ...feed, updatedAt: T0 + 1000 } })
        const second = yield* store.upsertProducts(feed.id, [product("c", "C"), product("b", "B2")], T0 + 2000, 10)
        expect(second._tag).toBe("Upserted")
        expect(yield* store.listProducts(feed.id)).toEqual([
          product("b", "B2").product,
          product("a", "A").product,
          product("c", "C").product
        ])
        expect(Option.getOrThrow(yield* store.getFeed(feed.id)).updatedAt).toBe(T0 + 2000)
      }))

    it.effect("the product JSON comes back as stored: key order, nesting, unicode", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        const feed = newFeed()
        yield* store.createFeed(feed)
        const stored = {
          variants: [{ title: "Café ☕ 𝄞", id: "v" }],
          id: "p",
          description: { markdown: "*x*", plain: "x" }
        }
        yield* store.upsertProducts(feed.id, [{ productId: "p", product: stored }], T0, 10)
        const [back] = yield* store.listProducts(feed.id)
        expect(back).toEqual(stored)
        expect(JSON.stringify(back)).toBe(JSON.stringify(stored))
      }))

    it.effect("updatedAt never moves back; products of another feed are untouched", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        const feed = newFeed()
        const other = newFeed()
        yield* store.createFeed(feed)
        yield* store.createFeed(other)
        yield* store.upsertProducts(other.id, [product("a", "Other")], T0, 10)
        yield* store.upsertProducts(feed.id, [product("a", "Mine")], T0 + 5000, 10)
        const earlier = yield* store.upsertProducts(feed.id, [product("a", "Mine again")], T0 + 1000, 10)
        expect(earlier._tag === "Upserted" && earlier.feed.updatedAt).toBe(T0 + 5000)
        expect(yield* store.listProducts(other.id)).toEqual([product("a", "Other").product])
        expect(yield* store.listProducts(feed.id)).toEqual([product("a", "Mine again").product])
      }))

    it.effect("an upsert of an unknown feed writes nothing", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        expect(yield* store.upsertProducts("feed_missing", [product("a", "A")], T0, 10)).toEqual({
          _tag: "FeedNotFound"
        })
        expect(yield* store.listProducts("feed_missing")).toEqual([])
      }))

    it.effect("beyond maxProducts nothing is written; replacing existing ids does not count twice", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        const feed = newFeed()
        yield* store.createFeed(feed)
        yield* store.upsertProducts(feed.id, [product("a", "A"), product("b", "B")], T0 + 1, 3)
        expect(yield* store.upsertProducts(feed.id, [product("c", "C"), product("d", "D")], T0 + 2, 3)).toEqual({
          _tag: "TooManyProducts",
          maxProducts: 3
        })
        expect((yield* store.listProducts(feed.id)).length).toBe(2)
        expect(Option.getOrThrow(yield* store.getFeed(feed.id)).updatedAt).toBe(T0 + 1)
        const replaced = yield* store.upsertProducts(
          feed.id,
          [product("a", "A2"), product("b", "B2"), product("c", "C")],
          T0 + 3,
          3
        )
        expect(replaced._tag).toBe("Upserted")
        expect((yield* store.listProducts(feed.id)).length).toBe(3)
      }))

    it.effect("a transaction that fails undoes its upsert", () =>
      Effect.gen(function*() {
        const store = yield* FeedStore
        const feed = newFeed()
        yield* store.createFeed(feed)
        const failed = yield* Effect.exit(
          store.transaction(
            Effect.zipRight(store.upsertProducts(feed.id, [product("a", "A")], T0 + 9, 10), Effect.fail("boom"))
          )
        )
        expect(failed._tag).toBe("Failure")
        expect(yield* store.listProducts(feed.id)).toEqual([])
        expect(Option.getOrThrow(yield* store.getFeed(feed.id)).updatedAt).toBe(T0)
      }))
  })
