/**
 * The hosted Feed API on every store (memory, embedded PGlite, PostgreSQL when `TEST_DATABASE_URL` is
 * set): create, upsert and read back through HTTP; concurrent upserts of one feed all land; an
 * idempotent creation made at once many times creates one feed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, TestClock } from "effect"
import { testApp } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import { createdFeed, everyFieldProduct, feeds, mugProduct, NOW, tshirtProduct } from "./feed-fixtures.ts"
import { expectOfficial } from "./official-feed-schema.ts"

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`Feed API: ${store.name}`, () => {
    store.register()
    const live = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(
        store.freshStores,
        (stores) => Effect.provide(effect, testApp(stores) as Layer.Layer<any>)
      ) as Effect.Effect<A, E, never>
    const run = <A, E>(effect: Effect.Effect<A, E, any>) => live(Effect.zipRight(TestClock.setTime(NOW), effect))

    it.effect("create, upsert, replace, read back exactly, in first-upsert order", () =>
      run(Effect.gen(function*() {
        const feed = yield* createdFeed()
        expect((yield* feeds.get(feed.id)).body).toEqual(feed)
        yield* feeds.upsert(feed.id, { products: [tshirtProduct(), mugProduct()] })
        yield* TestClock.adjust("1 minute")
        const replaced = mugProduct({ title: "Mug (new title)" })
        const upsert = yield* feeds.upsert(feed.id, { products: [everyFieldProduct(), replaced] })
        expect(upsert.body).toEqual({ id: feed.id, accepted: true })
        const read = yield* feeds.products(feed.id)
        expectOfficial("ProductsResponse", read.body)
        expect(read.text).toBe(JSON.stringify({ products: [tshirtProduct(), replaced, everyFieldProduct()] }))
        const metadata = yield* feeds.get(feed.id)
        expectOfficial("FeedMetadata", metadata.body)
        expect(metadata.body.updated_at).toBe("2026-04-20T12:01:00.000Z")
        expect((yield* feeds.get("feed_missing")).status).toBe(404)
      })))

    it.live("concurrent upserts of different products of one feed all land", () =>
      live(Effect.gen(function*() {
        const feed = yield* createdFeed()
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => feeds.upsert(feed.id, { products: [mugProduct({ id: `p${i}` })] })),
          { concurrency: "unbounded" }
        )
        expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200))
        const ids = (yield* feeds.products(feed.id)).body.products.map((product: { id: string }) => product.id)
        expect([...ids].sort()).toEqual(Array.from({ length: 8 }, (_, i) => `p${i}`).sort())
      })))

    it.live("one Idempotency-Key sent at once many times creates one feed", () =>
      live(Effect.gen(function*() {
        const options = { headers: { "idempotency-key": "feed-once" } }
        const answers = yield* Effect.all(Array.from({ length: 6 }, () => feeds.create({}, options)), {
          concurrency: "unbounded"
        })
        const created = answers.filter((answer) => answer.status === 201)
        expect(created.length).toBeGreaterThan(0)
        expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1)
        for (const answer of answers.filter((a) => a.status !== 201)) {
          expect(answer.status).toBe(409)
          expectOfficial("Error", answer.body)
        }
      })))
  })
}
