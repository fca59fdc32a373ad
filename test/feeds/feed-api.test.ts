/**
 * The hosted Feed API (2026-04-17) over HTTP: every answer exactly an official schema
 * (`official-feed-schema.ts`), creation, readback, upsert semantics, 404s, and the feed's own codes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, TestClock } from "effect"
import {
  createdFeed,
  createFeedRequest,
  everyFieldProduct,
  feeds,
  type Json,
  mugProduct,
  runFeeds,
  tshirtProduct
} from "./feed-fixtures.ts"
import { expectOfficial, isOfficial } from "./official-feed-schema.ts"

const expectError = (response: { status: number; body: any }, status: number, code: string, param?: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  expectOfficial("Error", response.body)
  expect(response.body.code).toBe(code)
  if (param !== undefined) expect(response.body.param).toBe(param)
}

describe("our fixtures are the official shapes", () => {
  it("requests adapted from the official examples are valid 2026-04-17 payloads", () => {
    expect(isOfficial("CreateFeedRequest", createFeedRequest)).toBe(true)
    for (const product of [tshirtProduct(), mugProduct(), everyFieldProduct()]) {
      expect(isOfficial("Product", product), product.id).toBe(true)
    }
    expect(isOfficial("UpsertProductsRequest", { products: [tshirtProduct()] })).toBe(true)
  })
})

describe("POST /feeds", () => {
  it.effect("201 FeedMetadata: a feed_ id, the target country, updated_at from the clock", () =>
    runFeeds(Effect.gen(function*() {
      const response = yield* feeds.create(createFeedRequest)
      expect(response.status).toBe(201)
      expectOfficial("FeedMetadata", response.body)
      expect(response.body).toEqual({
        id: expect.stringMatching(/^feed_[0-9A-Za-z]{22}$/),
        target_country: "US",
        updated_at: "2026-04-20T12:00:00.000Z"
      })
      const bare = yield* createdFeed({})
      expect(bare).toEqual({ id: expect.stringMatching(/^feed_/), updated_at: "2026-04-20T12:00:00.000Z" })
      expect(bare.id).not.toBe(response.body.id)
    })))

  it.effect("target_country must be an assigned ISO 3166-1 alpha-2 code: 400 invalid_target_country", () =>
    runFeeds(Effect.gen(function*() {
      for (const target_country of ["us", "USA", "ZZ", "U", "", 840, null]) {
        const response = yield* feeds.create({ target_country })
        expectError(response, 400, "invalid_target_country", "$.target_country")
        expect(response.body.message).toBe("target_country must be an ISO 3166-1 alpha-2 code")
      }
    })))

  it.effect("anything but target_country, or not an object: 400 invalid with its JSONPath", () =>
    runFeeds(Effect.gen(function*() {
      expectError(yield* feeds.create({ target_country: "US", locale: "en-US" }), 400, "invalid", "$.locale")
      expectError(yield* feeds.create([]), 400, "invalid", "$")
      expectError(yield* feeds.create("{"), 400, "invalid_json")
      expectError(yield* feeds.create({}, { contentType: "text/plain" }), 400, "invalid_content_type")
    })))

  it.effect("with an Idempotency-Key a retry gets the same feed, replayed", () =>
    runFeeds(Effect.gen(function*() {
      const options = { headers: { "idempotency-key": "feed-create-1" } }
      const first = yield* feeds.create(createFeedRequest, options)
      const again = yield* feeds.create(createFeedRequest, options)
      expect(first.status).toBe(201)
      expect(again.status).toBe(201)
      expect(again.body).toEqual(first.body)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      const other = yield* feeds.create({ target_country: "GB" }, options)
      expect(other.status).toBe(409)
      expectOfficial("Error", other.body)
    })))
})

describe("GET /feeds/{id}", () => {
  it.effect("the feed's metadata; an unknown id 404 feed_not_found", () =>
    runFeeds(Effect.gen(function*() {
      const feed = yield* createdFeed()
      const response = yield* feeds.get(feed.id)
      expect(response.status).toBe(200)
      expectOfficial("FeedMetadata", response.body)
      expect(response.body).toEqual(feed)
      const missing = yield* feeds.get("feed_8f3K2x")
      expectError(missing, 404, "feed_not_found", "$.id")
    })))

  it.effect("a feed is its creator's: another agent key gets 404, as for no feed", () =>
    runFeeds(
      Effect.gen(function*() {
        const feed = yield* createdFeed()
        const auth = "sk_other_platform"
        expectError(yield* feeds.get(feed.id, { auth }), 404, "feed_not_found")
        expectError(yield* feeds.products(feed.id, { auth }), 404, "feed_not_found")
        expectError(yield* feeds.upsert(feed.id, { products: [mugProduct()] }, { auth }), 404, "feed_not_found")
        expect((yield* feeds.products(feed.id)).body).toEqual({ products: [] })
      }),
      {
        config: {
          apiKeys: ["sk_test_key", "sk_other_platform"].map((key) => Redacted.make(key))
        }
      }
    ))
})

describe("GET and PATCH /feeds/{id}/products", () => {
  it.effect("a new feed has no products; an upsert is accepted and read back exactly", () =>
    runFeeds(Effect.gen(function*() {
      const feed = yield* createdFeed()
      const empty = yield* feeds.products(feed.id)
      expect(empty.status).toBe(200)
      expectOfficial("ProductsResponse", empty.body)
      expect(empty.body).toEqual({ products: [] })

      yield* TestClock.adjust("90 seconds")
      const upsert = yield* feeds.upsert(feed.id, { products: [tshirtProduct(), everyFieldProduct()] })
      expect(upsert.status).toBe(200)
      expectOfficial("UpsertProductsResponse", upsert.body)
      expect(upsert.body).toEqual({ id: feed.id, accepted: true })

      const read = yield* feeds.products(feed.id)
      expectOfficial("ProductsResponse", read.body)
      expect(read.body).toEqual({ products: [tshirtProduct(), everyFieldProduct()] })
      expect((yield* feeds.get(feed.id)).body.updated_at).toBe("2026-04-20T12:01:30.000Z")
    })))

  it.effect("upsert by Product.id: the products sent replace theirs whole, the others stay, order kept", () =>
    runFeeds(Effect.gen(function*() {
      const feed = yield* createdFeed()
      yield* feeds.upsert(feed.id, { products: [tshirtProduct(), mugProduct()] })
      const soldOut: Json = tshirtProduct()
      soldOut.variants[0].availability = { available: false, status: "out_of_stock" }
      const smaller = { id: "prod_tshirt_classic", variants: [{ id: "tshirt-classic", title: "T-Shirt" }] }
      expect((yield* feeds.upsert(feed.id, { products: [soldOut] })).status).toBe(200)
      expect((yield* feeds.products(feed.id)).body.products).toEqual([soldOut, mugProduct()])
      // Replaced, not merged: fields the new object leaves out are gone.
      yield* feeds.upsert(feed.id, { products: [smaller, mugProduct({ id: "prod_new", variants: [] })] })
      const read = yield* feeds.products(feed.id)
      expectOfficial("ProductsResponse", read.body)
      expect(read.body.products).toEqual([smaller, mugProduct(), mugProduct({ id: "prod_new", variants: [] })])
    })))

  it.effect("an unknown feed: 404 feed_not_found on read and upsert, nothing stored", () =>
    runFeeds(Effect.gen(function*() {
      expectError(yield* feeds.products("feed_missing"), 404, "feed_not_found", "$.id")
      expectError(yield* feeds.upsert("feed_missing", { products: [mugProduct()] }), 404, "feed_not_found", "$.id")
    })))
})

/** A product payload with one thing wrong, and the JSONPath the 400 must name. */
const invalidPayloads: ReadonlyArray<readonly [string, unknown, string]> = [
  ["no products", {}, "$.products"],
  ["products not an array", { products: {} }, "$.products"],
  ["no product at all", { products: [] }, "$.products"],
  ["a key beside products", { products: [mugProduct()], feed_update_id: "upd_1" }, "$.feed_update_id"],
  ["a product without variants", { products: [{ id: "p" }] }, "$.products[0].variants"],
  ["a product without an id", { products: [{ variants: [] }] }, "$.products[0].id"],
  ["an empty product id", { products: [mugProduct({ id: "" })] }, "$.products[0].id"],
  ["an unknown product key", { products: [mugProduct({ sku: "x" })] }, "$.products[0].sku"],
  [
    "the unreleased last_update_id",
    { products: [mugProduct({ last_update_id: "u" })] },
    "$.products[0].last_update_id"
  ],
  [
    "a variant without a title",
    { products: [mugProduct(), mugProduct({ id: "p2", variants: [{ id: "v" }] })] },
    "$.products[1].variants[0].title"
  ],
  [
    "a lowercase currency",
    { products: [mugProduct({ variants: [{ id: "v", title: "V", price: { amount: 1, currency: "usd" } }] })] },
    "$.products[0].variants[0].price.currency"
  ],
  [
    "a fractional amount",
    { products: [mugProduct({ variants: [{ id: "v", title: "V", price: { amount: 1.5, currency: "USD" } }] })] },
    "$.products[0].variants[0].price.amount"
  ],
  [
    "a negative list price",
    { products: [mugProduct({ variants: [{ id: "v", title: "V", list_price: { amount: -1, currency: "USD" } }] })] },
    "$.products[0].variants[0].list_price.amount"
  ],
  ["a relative url", { products: [mugProduct({ url: "/products/mug" })] }, "$.products[0].url"],
  [
    "media without a url",
    { products: [mugProduct({ media: [{ type: "image" }] })] },
    "$.products[0].media[0].url"
  ],
  ["an empty description", { products: [mugProduct({ description: {} })] }, "$.products[0].description"],
  [
    "availability not a boolean",
    { products: [mugProduct({ variants: [{ id: "v", title: "V", availability: { available: "yes" } }] })] },
    "$.products[0].variants[0].availability.available"
  ],
  [
    "two products with one id",
    { products: [mugProduct(), mugProduct({ title: "again" })] },
    "$.products[1].id"
  ],
  [
    "two variants with one id",
    { products: [mugProduct({ variants: [{ id: "v", title: "A" }, { id: "v", title: "B" }] })] },
    "$.products[0].variants[1].id"
  ],
  ["a NUL character", { products: [mugProduct({ title: "a\u0000b" })] }, "$.products[0].title"]
]

describe("PATCH /feeds/{id}/products: 400 invalid_product_payload, param the first failure's JSONPath", () => {
  for (const [name, body, param] of invalidPayloads) {
    it.effect(name, () =>
      runFeeds(Effect.gen(function*() {
        const feed = yield* createdFeed()
        yield* feeds.upsert(feed.id, { products: [tshirtProduct()] })
        const before = yield* feeds.get(feed.id)
        yield* TestClock.adjust("1 minute")
        const response = yield* feeds.upsert(feed.id, body)
        expectError(response, 400, "invalid_product_payload", param)
        expect(response.body.message).toMatch(/\S/)
        // Nothing changed: not the products, not updated_at.
        expect((yield* feeds.products(feed.id)).body).toEqual({ products: [tshirtProduct()] })
        expect((yield* feeds.get(feed.id)).body).toEqual(before.body)
      })))
  }

  it.effect("the official example's message for no product", () =>
    runFeeds(Effect.gen(function*() {
      const feed = yield* createdFeed()
      const response = yield* feeds.upsert(feed.id, { products: [] })
      expect(response.body).toEqual({
        type: "invalid_request",
        code: "invalid_product_payload",
        message: "products must contain at least one valid Product",
        param: "$.products"
      })
    })))

  it.effect("malformed JSON and a wrong content type keep the common codes", () =>
    runFeeds(Effect.gen(function*() {
      const feed = yield* createdFeed()
      expectError(yield* feeds.upsert(feed.id, "{\"products\": ["), 400, "invalid_json")
      expectError(
        yield* feeds.upsert(feed.id, { products: [mugProduct()] }, { contentType: "text/plain" }),
        400,
        "invalid_content_type"
      )
    })))
})
