/**
 * Publishing the merchant's products to an agent-hosted Feed API (`FEED_API_URL`): against this
 * service's own hosted Feed API on a port (the agent's side), the feed is created once and every
 * product pushed in the official 2026-04-17 form; only what changed is pushed again; against a Feed API
 * that fails and recovers, the push is retried after its backoff; a product it refuses is
 * dead-lettered alone and pushed again once retried.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, Redacted, TestClock } from "effect"
import { HttpServerLive } from "../../src/app/server.ts"
import { FeedPublisher } from "../../src/feeds/feed-publisher.ts"
import { makeFeedApiClient } from "../../src/feeds/http/feed-api-client.ts"
import { backoffMillis, MAX_ATTEMPTS } from "../../src/feeds/http/feed-publisher.ts"
import { API_KEY, get, post, request, testApp } from "../support/http.ts"
import { freePort } from "../support/server-process.ts"
import { expectOfficial } from "./official-feed-schema.ts"
import { scriptedFeedServer } from "./scripted-feed-server.ts"

const DEMO_PRODUCTS = 6

/** The agent's side: this service on a free port (memory stores), its hosted Feed API's base URL. */
const hostedFeedApi = Effect.gen(function*() {
  const port = yield* freePort
  yield* Layer.build(HttpServerLive.pipe(Layer.provide(testApp({ config: { port, host: "127.0.0.1" } })))).pipe(
    Logger.withMinimumLogLevel(LogLevel.Warning)
  )
  return `http://127.0.0.1:${port}`
})

const agentClient = (baseUrl: string) =>
  makeFeedApiClient({ baseUrl, apiKey: Redacted.make(API_KEY) }).pipe(Effect.provide(NodeHttpClient.layer))

/** The merchant's side publishing to `apiUrl`, running `effect`. */
const publishingTo = <A, E>(apiUrl: string, effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    effect,
    testApp({
      config: {
        feedPublication: Option.some({ apiUrl, apiKey: Redacted.make(API_KEY), targetCountry: "US" })
      }
    })
  ) as Effect.Effect<A, E, never>

const publisher = Effect.map(FeedPublisher, Option.getOrThrow)

const feedMetadata = { id: "feed_scripted", target_country: "US", updated_at: "2026-04-20T12:00:00Z" }
const accepted = { status: 200, body: { id: "feed_scripted", accepted: true } }

describe("publishing the catalog to an agent's Feed API", () => {
  it.scoped(
    "every product in the official form; the feed made once; then only what changed",
    () =>
      Effect.gen(function*() {
        const baseUrl = yield* hostedFeedApi
        const agent = yield* agentClient(baseUrl)
        yield* publishingTo(
          baseUrl,
          Effect.gen(function*() {
            const feeds = yield* publisher
            const first = yield* feeds.pushAll
            expect(first).toMatchObject({ sent: DEMO_PRODUCTS, failed: 0 })
            expect((yield* agent.getFeed(first.feedId)).target_country).toBe("US")
            const products = yield* agent.getProducts(first.feedId)
            expect(products).toHaveLength(DEMO_PRODUCTS)
            for (const product of products) expectOfficial("Product", product)
            const shirt = products.find((product) => product.id === "tshirt-classic")!
            expect(shirt.variants).toEqual([
              expect.objectContaining({
                id: "tshirt-classic",
                title: "Classic Cotton T-Shirt",
                price: { amount: 2500, currency: "USD" },
                availability: { available: true, status: "in_stock" }
              })
            ])
            expect(yield* feeds.pushChanged).toMatchObject({ feedId: first.feedId, sent: 0, unchanged: DEMO_PRODUCTS })
            // A new price is pushed alone; the variant sold out shows unavailable.
            const etag = (yield* get("/products/tshirt-classic")).headers.get("etag")!
            const patched = yield* request("PATCH", "/products/tshirt-classic/variants/tshirt-classic", {
              body: { unit_amount: 2700, stock: 0 },
              headers: { "if-match": etag }
            })
            expect(patched.status, patched.text).toBe(200)
            expect(yield* feeds.pushChanged).toMatchObject({ sent: 1, unchanged: DEMO_PRODUCTS - 1 })
            const after = (yield* agent.getProducts(first.feedId)).find((product) => product.id === "tshirt-classic")!
            expect(after.variants[0]).toMatchObject({
              price: { amount: 2700, currency: "USD" },
              availability: { available: false, status: "out_of_stock" }
            })
            const status = yield* feeds.status
            expect(status).toMatchObject({ feedId: first.feedId, products: DEMO_PRODUCTS, published: DEMO_PRODUCTS })
            expect(status.pending).toEqual([])
          })
        )
      }),
    60_000
  )

  it.scoped(
    "a Feed API failing, then recovering: nothing lost, retried after the backoff",
    () =>
      Effect.gen(function*() {
        const server = yield* scriptedFeedServer([
          { status: 201, body: feedMetadata },
          { status: 503, body: { type: "service_unavailable", code: "busy", message: "Try later" } },
          accepted
        ])
        yield* publishingTo(
          server.baseUrl,
          Effect.gen(function*() {
            const feeds = yield* publisher
            expect(yield* feeds.pushAll).toMatchObject({ feedId: "feed_scripted", sent: 0, failed: DEMO_PRODUCTS })
            const waiting = yield* feeds.status
            expect(waiting.pending).toHaveLength(DEMO_PRODUCTS)
            expect(waiting.pending[0]).toMatchObject({ attempts: 1, lastError: "Try later" })
            // Not before its backoff.
            expect(yield* feeds.pushChanged).toMatchObject({ sent: 0, deferred: DEMO_PRODUCTS })
            yield* TestClock.adjust(backoffMillis(1))
            expect(yield* feeds.pushChanged).toMatchObject({ sent: DEMO_PRODUCTS, failed: 0 })
            expect((yield* feeds.status).published).toBe(DEMO_PRODUCTS)
            // One creation; the pushes after it.
            expect(server.received.filter((r) => r.method === "POST")).toHaveLength(1)
            expect(server.received.filter((r) => r.method === "PATCH")).toHaveLength(2)
            const sent = server.received.at(-1)!.body as { products: Array<unknown> }
            for (const product of sent.products) expectOfficial("Product", product)
          })
        )
      }),
    60_000
  )

  it.scoped(
    "a product the Feed API refuses is dead-lettered alone; retried, it is pushed again",
    () =>
      Effect.gen(function*() {
        const refused = {
          status: 400,
          body: { type: "invalid_request", code: "invalid_product_payload", message: "No", param: "$.products[0]" }
        }
        // The batch refused, then each product alone: the first refused, the others accepted.
        const server = yield* scriptedFeedServer([
          { status: 201, body: feedMetadata },
          refused,
          refused,
          ...Array.from({ length: DEMO_PRODUCTS - 1 }, () => accepted)
        ])
        yield* publishingTo(
          server.baseUrl,
          Effect.gen(function*() {
            const feeds = yield* publisher
            expect(yield* feeds.pushAll).toMatchObject({ sent: DEMO_PRODUCTS - 1, failed: 1 })
            const status = yield* feeds.status
            expect(status.dead).toHaveLength(1)
            expect(status.dead[0]!.lastError).toMatch(/400 invalid_product_payload/)
            // Dead: left alone by later pushes, whatever the backoff.
            yield* TestClock.adjust(backoffMillis(MAX_ATTEMPTS))
            expect(yield* feeds.pushChanged).toMatchObject({ sent: 0, failed: 0 })
            expect(yield* feeds.retryDead).toBe(1)
            expect(yield* feeds.pushChanged).toMatchObject({ sent: 1 })
            expect((yield* feeds.status).dead).toEqual([])
          })
        )
      }),
    60_000
  )
})

describe("the merchant's feed publication routes", () => {
  it.effect("with no publication (FEED_API_URL=off): 404, the file form still served", () =>
    Effect.provide(
      Effect.gen(function*() {
        const status = yield* get("/feed-publication")
        expect(status.status).toBe(404)
        expect(status.body).toMatchObject({ code: "not_found", message: expect.stringContaining("FEED_API_URL") })
        expect((yield* post("/feed-publication/push")).status).toBe(404)
        const file = yield* get("/feed-publication/products")
        expect(file.status).toBe(200)
        expect(file.body.products).toHaveLength(DEMO_PRODUCTS)
        for (const product of file.body.products) expectOfficial("Product", product)
        expectOfficial("FeedMetadata", file.body.metadata)
        expect(file.body.invalid).toEqual([])
        // An agent's key cannot read it.
        expect((yield* get("/feed-publication/products", { auth: API_KEY })).status).toBe(403)
      }),
      testApp()
    ))

  it.scoped("push on request, the state with its dead letters, their retry", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([
        { status: 201, body: feedMetadata },
        { status: 400, body: { type: "invalid_request", code: "invalid_product_payload", message: "No" } },
        ...Array.from({ length: DEMO_PRODUCTS }, (_, i) =>
          i === 0
            ? { status: 400, body: { type: "invalid_request", code: "invalid_product_payload", message: "No" } }
            : accepted),
        accepted
      ])
      yield* publishingTo(
        server.baseUrl,
        Effect.gen(function*() {
          const pushed = yield* post("/feed-publication/push")
          expect(pushed.status, pushed.text).toBe(200)
          expect(pushed.body).toEqual({
            feed_id: "feed_scripted",
            sent: DEMO_PRODUCTS - 1,
            unchanged: 0,
            deferred: 0,
            failed: 1
          })
          const status = yield* get("/feed-publication")
          expect(status.body).toMatchObject({
            api_url: server.baseUrl,
            feed_id: "feed_scripted",
            products: DEMO_PRODUCTS,
            published: DEMO_PRODUCTS - 1,
            pending: []
          })
          expect(status.body.dead).toEqual([
            expect.objectContaining({ attempts: 1, last_error: expect.stringContaining("invalid_product_payload") })
          ])
          expect((yield* post("/feed-publication/retry")).body).toEqual({ retried: 1 })
          expect((yield* get("/feed-publication")).body.pending).toHaveLength(1)
          const file = yield* get("/feed-publication/products")
          expect(file.body.metadata.id).toBe("feed_scripted")
          expect(file.body.metadata.target_country).toBe("US")
        })
      )
    }), 60_000)
})
