/**
 * Feed API requests of our own, adapted from the official examples of 2026-04-17
 * (`examples/2026-04-17/examples.feed.json`) to the demo catalog: its t-shirt stands for their Classic
 * Tee (every field of `upsert_products_request_single_product`), its mug for the minimal product of
 * `get_products_response`; and a client of the hosted Feed API speaking 2026-04-17.
 */
import { Effect, TestClock } from "effect"
import { request, type RequestOptions, testApp, type TestAppOptions } from "../support/http.ts"
import { expectOfficial } from "./official-feed-schema.ts"

export type Json = Record<string, any>

export const FEED_VERSION = "2026-04-17"

/** `create_feed_request_minimal`. */
export const createFeedRequest: Json = { target_country: "US" }

/** The example upsert's product, every field it has, as the demo t-shirt (a variant per size). */
export const tshirtProduct = (overrides: Json = {}): Json => ({
  id: "prod_tshirt_classic",
  title: "Classic Cotton T-Shirt",
  description: { plain: "A classic cotton tee with a soft feel and relaxed fit." },
  url: "https://merchant.test/products/tshirt-classic",
  media: [
    { type: "image", url: "https://cdn.merchant.test/products/tshirt-classic/main.jpg", alt_text: "Front view" }
  ],
  variants: [
    {
      id: "tshirt-classic",
      title: "Classic Cotton T-Shirt - Medium",
      description: { plain: "Classic cotton tee, size medium." },
      url: "https://merchant.test/products/tshirt-classic?variant=tshirt-classic",
      barcodes: [{ type: "GTIN", value: "00012345600029" }],
      price: { amount: 2500, currency: "USD" },
      availability: { available: true, status: "in_stock" },
      variant_options: [{ name: "Size", value: "Medium" }],
      media: [
        { type: "image", url: "https://cdn.merchant.test/products/tshirt-classic/medium.jpg", alt_text: "Medium" }
      ],
      seller: { name: "Merchant Test" },
      marketplace: { name: "Example Marketplace" }
    }
  ],
  ...overrides
})

/** `get_products_response`'s minimal product, as the demo mug. */
export const mugProduct = (overrides: Json = {}): Json => ({
  id: "prod_mug_ceramic",
  title: "Ceramic Coffee Mug",
  variants: [{ id: "mug-ceramic", title: "Ceramic Coffee Mug, 12 oz" }],
  ...overrides
})

/** A product using every optional field of the schema the examples leave out. */
export const everyFieldProduct = (): Json => ({
  ...tshirtProduct({ id: "prod_every_field" }),
  variants: [{
    ...tshirtProduct().variants[0],
    id: "every-field",
    description: { plain: "Plain", html: "<p>Rich</p>", markdown: "*Rich*" },
    list_price: { amount: 3000, currency: "USD" },
    unit_price: {
      amount: 208,
      currency: "USD",
      measure: { value: 12, unit: "oz" },
      reference: { value: 1, unit: "oz" }
    },
    categories: [{ value: "Apparel > Shirts", taxonomy: "merchant" }],
    condition: ["new"],
    media: [{ type: "image", url: "https://cdn.merchant.test/x.jpg", alt_text: "X", width: 800, height: 600 }],
    seller: {
      name: "Merchant Test",
      links: [{ type: "refund_policy", title: "Refunds", url: "https://merchant.test/policies/refunds" }]
    }
  }]
})

const feedOptions = (options: Omit<RequestOptions, "body"> = {}): Omit<RequestOptions, "body"> => ({
  version: FEED_VERSION,
  ...options
})

export const feeds = {
  create: (body: unknown = createFeedRequest, options?: Omit<RequestOptions, "body">) =>
    request("POST", "/feeds", { ...feedOptions(options), body }),
  get: (id: string, options?: Omit<RequestOptions, "body">) => request("GET", `/feeds/${id}`, feedOptions(options)),
  products: (id: string, options?: Omit<RequestOptions, "body">) =>
    request("GET", `/feeds/${id}/products`, feedOptions(options)),
  upsert: (id: string, body: unknown, options?: Omit<RequestOptions, "body">) =>
    request("PATCH", `/feeds/${id}/products`, { ...feedOptions(options), body })
}

/** Monday 2026-04-20, noon UTC: the clock of the Feed API tests. */
export const NOW = Date.parse("2026-04-20T12:00:00.000Z")

/** Runs `effect` against a fresh application (memory stores unless `options` say otherwise) at `NOW`. */
export const runFeeds = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), testApp(options)) as Effect.Effect<A, E, never>

/** Creates a feed (201 expected) and returns its metadata. */
export const createdFeed = (body: unknown = createFeedRequest) =>
  Effect.map(feeds.create(body), (response) => {
    if (response.status !== 201) throw new Error(`create failed: ${response.status} ${response.text}`)
    expectOfficial("FeedMetadata", response.body)
    return response.body as { id: string; target_country?: string; updated_at: string }
  })
