/**
 * The Feed API in the OpenAPI documents: in 2026-04-17's only, its four operations under the agent key,
 * and the documented schemas accepting the requests adapted from the official examples and refusing
 * an unknown key (closed objects), checked with a JSON Schema validator.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect } from "effect"
import { get } from "../support/http.ts"
import { createFeedRequest, everyFieldProduct, mugProduct, runFeeds, tshirtProduct } from "./feed-fixtures.ts"

const open = { auth: false, version: false } as const

/** Effect marks `Schema.Unknown` with one shared `$id`, which a validator reads as a clash. */
const withoutIds = (node: unknown): unknown =>
  Array.isArray(node)
    ? node.map(withoutIds)
    : node !== null && typeof node === "object"
    ? Object.fromEntries(Object.entries(node).filter(([key]) => key !== "$id").map(([k, v]) => [k, withoutIds(v)]))
    : node

const feedPaths = (document: any) => Object.keys(document.paths).filter((path) => path.startsWith("/feeds")).sort()

describe("the Feed API in the OpenAPI documents", () => {
  it.effect("2026-04-17's document has its four operations, each under the agent key; older ones none", () =>
    runFeeds(Effect.gen(function*() {
      const document = (yield* get("/openapi/2026-04-17.json", open)).body
      expect(feedPaths(document)).toEqual(["/feeds", "/feeds/{id}", "/feeds/{id}/products"])
      const operations = [
        document.paths["/feeds"].post,
        document.paths["/feeds/{id}"].get,
        document.paths["/feeds/{id}/products"].get,
        document.paths["/feeds/{id}/products"].patch
      ]
      for (const operation of operations) {
        expect(operation.security).toEqual([{ agentKey: [] }])
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["400", "401", "403", "429"]))
      }
      expect(Object.keys(document.paths["/feeds"].post.responses)).toContain("201")
      expect(Object.keys(document.paths["/feeds/{id}/products"].patch.responses)).toEqual(
        expect.arrayContaining(["200", "404"])
      )
      expect(document.tags.map((tag: { name: string }) => tag.name)).toContain("feeds")
      for (const older of ["2025-09-29", "2026-01-30"] as const) {
        const olderDocument = (yield* get(`/openapi/${older}.json`, open)).body
        expect(feedPaths(olderDocument), older).toEqual([])
        expect(olderDocument.tags.map((tag: { name: string }) => tag.name), older).not.toContain("feeds")
      }
    })))

  it.effect("its schemas accept the official examples' shapes and refuse unknown keys", () =>
    runFeeds(Effect.gen(function*() {
      const document = (yield* get("/openapi/2026-04-17.json", open)).body
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
      ajv.addSchema({ $id: "doc", components: withoutIds(document.components) })
      const schema = (name: string) => ajv.getSchema(`doc#/components/schemas/${name}`)!
      expect(schema("CreateFeedRequest")(createFeedRequest)).toBe(true)
      expect(schema("CreateFeedRequest")({ target_country: "US", locale: "en" })).toBe(false)
      const upsert = schema("UpsertProductsRequest")
      expect(upsert({ products: [tshirtProduct(), mugProduct(), everyFieldProduct()] }), JSON.stringify(upsert.errors))
        .toBe(true)
      expect(upsert({ products: [mugProduct({ last_update_id: "upd_1" })] })).toBe(false)
      expect(schema("FeedMetadata")({ id: "feed_8f3K2x", target_country: "US", updated_at: "2026-03-01T00:00:00Z" }))
        .toBe(true)
      expect(schema("UpsertProductsResponse")({ id: "feed_8f3K2x", accepted: true })).toBe(true)
      expect(schema("UpsertProductsResponse")({ id: "feed_8f3K2x", accepted: true, feed_update_id: "upd_7kQ9mR" }))
        .toBe(false)
    })))
})
