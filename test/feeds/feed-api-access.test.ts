/**
 * Who reaches the hosted Feed API: agent keys only (401 without one, 403 for a merchant key), API-Version
 * 2026-04-17 only, the agent-platform role, a request budget per key, the body limit; every refusal in
 * the feed's Error object (no `supported_versions`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ALL_ROLES } from "../../src/platform/config.ts"
import { MAX_BODY_BYTES } from "../../src/platform/http/request-body-bytes.ts"
import { forbiddenMessage } from "../../src/platform/http/security.ts"
import { MERCHANT_API_KEY, request } from "../support/http.ts"
import { createdFeed, FEED_VERSION, feeds, mugProduct, runFeeds } from "./feed-fixtures.ts"
import { expectOfficial } from "./official-feed-schema.ts"

const ROUTES = [
  ["POST", "/feeds"],
  ["GET", "/feeds/feed_x"],
  ["GET", "/feeds/feed_x/products"],
  ["PATCH", "/feeds/feed_x/products"]
] as const

const call = (method: string, path: string, options: Parameters<typeof request>[2] = {}) =>
  request(method, path, {
    version: FEED_VERSION,
    ...(method === "GET" ? {} : { body: method === "POST" ? {} : { products: [mugProduct()] } }),
    ...options
  })

describe("keys", () => {
  it.effect("no key or an unknown one: 401 unauthorized; a merchant key: 403 forbidden", () =>
    runFeeds(Effect.gen(function*() {
      for (const [method, path] of ROUTES) {
        for (const auth of [false, "sk_unknown"] as const) {
          const response = yield* call(method, path, { auth })
          expect(response.status, `${method} ${path}`).toBe(401)
          expectOfficial("Error", response.body)
          expect(response.body.code).toBe("unauthorized")
        }
        const merchant = yield* call(method, path, { auth: MERCHANT_API_KEY })
        expect(merchant.status, `${method} ${path}`).toBe(403)
        expect(merchant.body).toEqual({
          type: "invalid_request",
          code: "forbidden",
          message: forbiddenMessage("agent")
        })
      }
    })))

  it.effect("a merchant key's POST with an Idempotency-Key is refused, never kept under the key", () =>
    runFeeds(Effect.gen(function*() {
      const options = { headers: { "idempotency-key": "k-1" } }
      expect((yield* feeds.create({}, { ...options, auth: MERCHANT_API_KEY })).status).toBe(403)
      expect((yield* feeds.create({}, options)).status).toBe(201)
    })))
})

describe("API-Version", () => {
  it.effect("absent: 400 missing_api_version; another version: 400 unsupported_api_version", () =>
    runFeeds(Effect.gen(function*() {
      for (const [method, path] of ROUTES) {
        const missing = yield* call(method, path, { version: false })
        expect(missing.status).toBe(400)
        expectOfficial("Error", missing.body)
        expect(missing.body).toMatchObject({ code: "missing_api_version", param: "$.headers['API-Version']" })
        for (const version of ["2026-01-30", "2025-09-29", "2026-13-01", "unreleased"]) {
          const other = yield* call(method, path, { version })
          expect(other.status, `${method} ${path} ${version}`).toBe(400)
          expectOfficial("Error", other.body)
          expect(other.body.code).toBe("unsupported_api_version")
        }
      }
    })))

  it.effect("a POST refused for its version is not kept under its Idempotency-Key", () =>
    runFeeds(Effect.gen(function*() {
      const headers = { "idempotency-key": "create-once" }
      expect((yield* feeds.create({}, { headers, version: "2026-01-30" })).status).toBe(400)
      const created = yield* feeds.create({}, { headers })
      expect(created.status).toBe(201)
      expect(created.headers.get("idempotent-replayed")).toBeNull()
    })))

  it.effect("a deployment not accepting 2026-04-17 serves no feed", () =>
    runFeeds(
      Effect.gen(function*() {
        const response = yield* feeds.create({})
        expect(response.status).toBe(400)
        expectOfficial("Error", response.body)
        expect(response.body.code).toBe("unsupported_api_version")
      }),
      { config: { apiVersions: ["2026-01-30", "2025-09-29"] } }
    ))

  it.effect("the key is checked before the version: no key and no version is 401", () =>
    runFeeds(Effect.gen(function*() {
      expect((yield* call("GET", "/feeds/feed_x", { auth: false, version: false })).status).toBe(401)
    })))
})

describe("the agent-platform role", () => {
  it.effect("without webhook_receiver in ROLES every feed route is 404 like an unknown route", () =>
    runFeeds(
      Effect.gen(function*() {
        for (const [method, path] of ROUTES) {
          const response = yield* call(method, path)
          expect(response.status, `${method} ${path}`).toBe(404)
          expect(response.body.code).toBe("not_found")
        }
      }),
      { config: { roles: new Set(ALL_ROLES.filter((role) => role !== "webhook_receiver")) } }
    ))
})

describe("limits", () => {
  it.effect("FEED_RATE_LIMIT_PER_MINUTE per key: the next request 429 with Retry-After", () =>
    runFeeds(
      Effect.gen(function*() {
        const feed = yield* createdFeed()
        expect((yield* feeds.get(feed.id)).status).toBe(200)
        const limited = yield* feeds.products(feed.id)
        expect(limited.status).toBe(429)
        expectOfficial("Error", limited.body)
        expect(limited.body.code).toBe("too_many_requests")
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
      }),
      { config: { feedRateLimitPerMinute: 2 } }
    ))

  it.effect("a body above 1 MiB: 413 request_too_large", () =>
    runFeeds(Effect.gen(function*() {
      const feed = yield* createdFeed()
      const big = { products: [mugProduct({ title: "x".repeat(MAX_BODY_BYTES) })] }
      const response = yield* feeds.upsert(feed.id, big)
      expect(response.status).toBe(413)
      expectOfficial("Error", response.body)
      expect(response.body.code).toBe("request_too_large")
    })))

  it.effect(
    "at most 1000 products per upsert and 10000 per feed: 400 with $.products",
    () =>
      runFeeds(Effect.gen(function*() {
        const feed = yield* createdFeed()
        const batch = (from: number, count: number) => ({
          products: Array.from({ length: count }, (_, i) => ({ id: `p${from + i}`, variants: [] }))
        })
        const tooMany = yield* feeds.upsert(feed.id, batch(0, 1001))
        expect(tooMany.status).toBe(400)
        expect(tooMany.body).toMatchObject({ code: "invalid_product_payload", param: "$.products" })
        for (let i = 0; i < 10; i++) expect((yield* feeds.upsert(feed.id, batch(i * 1000, 1000))).status).toBe(200)
        const full = yield* feeds.upsert(feed.id, batch(10_000, 1))
        expect(full.status).toBe(400)
        expectOfficial("Error", full.body)
        expect(full.body).toMatchObject({ code: "too_many_products", param: "$.products" })
        // Replacing products already there still fits.
        expect((yield* feeds.upsert(feed.id, batch(0, 1))).status).toBe(200)
        expect((yield* feeds.products(feed.id)).body.products).toHaveLength(10_000)
      })),
    60_000
  )
})
