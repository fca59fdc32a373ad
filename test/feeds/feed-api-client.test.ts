/**
 * `feed-api-client.ts` over real HTTP: against this service's own hosted Feed API (the server layer on a
 * port, Node's HTTP client), and against a scripted Feed API that fails and recovers (500 then 201),
 * refuses with a `param`, limits, hangs or answers something else: each failure typed, retriable or not.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Layer, Logger, LogLevel, Redacted, Schedule } from "effect"
import { HttpServerLive } from "../../src/app/server.ts"
import { makeFeedApiClient } from "../../src/feeds/http/feed-api-client.ts"
import { type FeedApiError, retryWhileRetriable } from "../../src/feeds/http/feed-api-errors.ts"
import { API_KEY, MERCHANT_API_KEY, testApp } from "../support/http.ts"
import { freePort } from "../support/server-process.ts"
import { everyFieldProduct, mugProduct, tshirtProduct } from "./feed-fixtures.ts"
import { expectOfficial } from "./official-feed-schema.ts"
import { scriptedFeedServer } from "./scripted-feed-server.ts"

const clientOf = (baseUrl: string, key = API_KEY, timeout: Duration.DurationInput = "5 seconds") =>
  makeFeedApiClient({ baseUrl, apiKey: Redacted.make(key), timeout }).pipe(
    Effect.provide(NodeHttpClient.layer)
  )

/** This service on a free port for the scope (memory stores): its hosted Feed API's base URL. */
const hostedFeedApi = Effect.gen(function*() {
  const port = yield* freePort
  yield* Layer.build(HttpServerLive.pipe(Layer.provide(testApp({ config: { port, host: "127.0.0.1" } })))).pipe(
    Logger.withMinimumLogLevel(LogLevel.Warning)
  )
  return `http://127.0.0.1:${port}`
})

const failure = <A>(effect: Effect.Effect<A, FeedApiError>) => Effect.flip(effect)

const feedMetadata = { id: "feed_8f3K2x", target_country: "US", updated_at: "2026-03-01T00:00:00Z" }

describe("against our own hosted Feed API", () => {
  it.scopedLive("create, read, upsert and read back the products", () =>
    Effect.gen(function*() {
      const client = yield* clientOf(yield* hostedFeedApi)
      const feed = yield* client.createFeed({ target_country: "US" }, { idempotencyKey: "create-us" })
      expectOfficial("FeedMetadata", feed)
      expect(feed).toMatchObject({ id: expect.stringMatching(/^feed_/), target_country: "US" })
      expect(yield* client.createFeed({ target_country: "US" }, { idempotencyKey: "create-us" })).toEqual(feed)
      expect(yield* client.getFeed(feed.id)).toEqual(feed)
      expect(yield* client.getProducts(feed.id)).toEqual([])
      const accepted = yield* client.upsertProducts(feed.id, [tshirtProduct(), mugProduct()])
      expect(accepted).toEqual({ id: feed.id, accepted: true })
      yield* client.upsertProducts(feed.id, [everyFieldProduct(), mugProduct({ title: "New mug" })])
      expect(yield* client.getProducts(feed.id)).toEqual([
        tshirtProduct(),
        mugProduct({ title: "New mug" }),
        everyFieldProduct()
      ])
    }))

  it.scopedLive("its refusals: 404 feed_not_found, 403 for a merchant key, 401 for an unknown key; none retriable", () =>
    Effect.gen(function*() {
      const baseUrl = yield* hostedFeedApi
      const client = yield* clientOf(baseUrl)
      const missing = yield* failure(client.getFeed("feed_missing"))
      expect(missing).toMatchObject({
        _tag: "FeedApiRejected",
        status: 404,
        code: "feed_not_found",
        param: "$.id",
        retriable: false
      })
      const merchant = yield* failure((yield* clientOf(baseUrl, MERCHANT_API_KEY)).createFeed({}))
      expect(merchant).toMatchObject({ _tag: "FeedApiRejected", status: 403, code: "forbidden", retriable: false })
      const unknown = yield* failure((yield* clientOf(baseUrl, "sk_unknown")).getFeed("feed_x"))
      expect(unknown).toMatchObject({ _tag: "FeedApiRejected", status: 401, code: "unauthorized" })
    }))

  it.scopedLive("an invalid product is refused before anything is sent", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([{ status: 200, body: { id: "feed_x", accepted: true } }])
      const client = yield* clientOf(server.baseUrl)
      const invalid = yield* failure(client.upsertProducts("feed_x", [mugProduct(), { id: "p2" }]))
      expect(invalid).toMatchObject({ _tag: "FeedPayloadInvalid", param: "$.products[1].variants", retriable: false })
      const country = yield* failure(client.createFeed({ target_country: "usa" }))
      expect(country).toMatchObject({ _tag: "FeedPayloadInvalid", param: "$.target_country" })
      expect(server.received).toEqual([])
    }))
})

describe("against a Feed API that fails", () => {
  it.scopedLive("500, then it recovers: retriable, and a retry while retriable succeeds", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([
        { status: 500, body: { type: "processing_error", code: "processing_error", message: "down" } },
        { status: 503, body: "<html>unavailable</html>", headers: { "retry-after": "2" } },
        { status: 201, body: feedMetadata }
      ])
      const client = yield* clientOf(server.baseUrl)
      const first = yield* failure(client.createFeed({ target_country: "US" }))
      expect(first).toMatchObject({ _tag: "FeedApiUnavailable", reason: "status", status: 500, retriable: true })
      const second = yield* failure(client.createFeed({ target_country: "US" }))
      expect(second).toMatchObject({ _tag: "FeedApiUnavailable", status: 503, retryAfterSeconds: 2 })
      const created = yield* client.createFeed({ target_country: "US" }, { idempotencyKey: "k1" }).pipe(
        retryWhileRetriable(Schedule.recurs(3))
      )
      expect(created).toEqual(feedMetadata)
      expect(server.received).toHaveLength(3)
      const last = server.received[2]!
      expect(last).toMatchObject({ method: "POST", url: "/feeds", body: { target_country: "US" } })
      expect(last.headers).toMatchObject({
        authorization: `Bearer ${API_KEY}`,
        "api-version": "2026-04-17",
        "content-type": "application/json",
        "idempotency-key": "k1"
      })
      expectOfficial("CreateFeedRequest", last.body)
    }))

  it.scopedLive("a retried upsert: 500 twice then 200, the same valid body each time", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([
        { status: 500 },
        { status: 502 },
        { status: 200, body: { id: "feed_x", accepted: true, feed_update_id: "upd_later_version" } }
      ])
      const client = yield* clientOf(`${server.baseUrl}/`)
      const answer = yield* client.upsertProducts("feed_x", [tshirtProduct()]).pipe(
        retryWhileRetriable(Schedule.recurs(5))
      )
      // A later version's extra key is dropped, not an error.
      expect(answer).toEqual({ id: "feed_x", accepted: true })
      expect(server.received.map((request) => `${request.method} ${request.url}`)).toEqual(
        Array(3).fill("PATCH /feeds/feed_x/products")
      )
      for (const request of server.received) {
        expectOfficial("UpsertProductsRequest", request.body)
        expect(request.body).toEqual({ products: [tshirtProduct()] })
      }
    }))

  it.scopedLive("400 with a param: rejected with its code and param, never retried", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([{
        status: 400,
        body: {
          type: "invalid_request",
          code: "invalid_product_payload",
          message: "products must contain at least one valid Product",
          param: "products"
        }
      }])
      const client = yield* clientOf(server.baseUrl)
      const refused = yield* failure(
        client.upsertProducts("feed_x", [mugProduct()]).pipe(retryWhileRetriable(Schedule.recurs(5)))
      )
      expect(refused).toMatchObject({
        _tag: "FeedApiRejected",
        status: 400,
        code: "invalid_product_payload",
        param: "products",
        message: "products must contain at least one valid Product",
        retriable: false
      })
      expect(server.received).toHaveLength(1)
    }))

  it.scopedLive("429 with Retry-After and 409 in flight are retriable; 409 conflict is not", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([
        {
          status: 429,
          body: { type: "invalid_request", code: "too_many_requests", message: "slow down" },
          headers: { "retry-after": "7" }
        },
        { status: 409, body: { type: "invalid_request", code: "idempotency_in_flight", message: "wait" } },
        { status: 409, body: { type: "invalid_request", code: "idempotency_conflict", message: "other body" } }
      ])
      const client = yield* clientOf(server.baseUrl)
      expect(yield* failure(client.getFeed("feed_x"))).toMatchObject({
        _tag: "FeedApiUnavailable",
        status: 429,
        code: "too_many_requests",
        retryAfterSeconds: 7,
        retriable: true
      })
      expect(yield* failure(client.getFeed("feed_x"))).toMatchObject({ _tag: "FeedApiUnavailable", status: 409 })
      expect(yield* failure(client.getFeed("feed_x"))).toMatchObject({
        _tag: "FeedApiRejected",
        status: 409,
        code: "idempotency_conflict"
      })
    }))

  it.scopedLive("no answer within the deadline, no server at all: retriable; a 200 that is not the API's: not", () =>
    Effect.gen(function*() {
      const hanging = yield* scriptedFeedServer([{ status: 200, hang: true }])
      const slow = yield* clientOf(hanging.baseUrl, API_KEY, "200 millis")
      expect(yield* failure(slow.getFeed("feed_x"))).toMatchObject({
        _tag: "FeedApiUnavailable",
        reason: "timeout",
        retriable: true
      })
      const nobody = yield* clientOf(`http://127.0.0.1:${yield* freePort}`)
      expect(yield* failure(nobody.getFeed("feed_x"))).toMatchObject({
        _tag: "FeedApiUnavailable",
        reason: "transport",
        retriable: true
      })
      const other = yield* scriptedFeedServer([{ status: 200, body: "<html>a login page</html>" }])
      expect(yield* failure((yield* clientOf(other.baseUrl)).getFeed("feed_x"))).toMatchObject({
        _tag: "FeedApiInvalidResponse",
        status: 200,
        retriable: false
      })
    }))

  it.scopedLive("ids are sent percent-encoded in the path", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([{ status: 200, body: { products: [] } }])
      const client = yield* clientOf(server.baseUrl)
      expect(yield* client.getProducts("feed/x y")).toEqual([])
      expect(server.received[0]!.url).toBe("/feeds/feed%2Fx%20y/products")
    }))
})
