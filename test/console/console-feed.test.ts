/**
 * The console's product feed page over HTTP: without `FEED_API_URL` it says nothing is published; with
 * one (a scripted Feed API, `test/feeds/scripted-feed-server.ts`) it shows the publication's state,
 * pushes every product on request, shows the dead letters with their last error (as text), retries them;
 * its forms are refused without the session's CSRF token.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { Role } from "../../src/platform/config.ts"
import { scriptedFeedServer } from "../feeds/scripted-feed-server.ts"
import { signedInConsole } from "../support/console-client.ts"
import { API_KEY, testApp } from "../support/http.ts"

const DEMO_PRODUCTS = 6

const feedMetadata = { id: "feed_scripted", target_country: "US", updated_at: "2026-04-20T12:00:00Z" }
const accepted = { status: 200, body: { id: "feed_scripted", accepted: true } }

const publishingTo = <A, E>(apiUrl: string, effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    effect,
    testApp({
      config: { feedPublication: Option.some({ apiUrl, apiKey: Redacted.make(API_KEY), targetCountry: "US" }) }
    })
  ) as Effect.Effect<A, E, never>

const run = <A, E>(effect: Effect.Effect<A, E, any>, roles?: ReadonlyArray<Role>) =>
  Effect.provide(effect, testApp(roles === undefined ? {} : { config: { roles: new Set(roles) } })) as Effect.Effect<
    A,
    E,
    never
  >

describe("the console's product feed page", () => {
  it.effect("without FEED_API_URL: says nothing is published; its forms do nothing", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const page = yield* client.get("/console/feed")
      expect(page.status).toBe(200)
      expect(page.text).toContain("Nothing is published")
      expect(page.text).toContain("<code>FEED_API_URL</code> is not set")
      expect(page.text).not.toContain("Push all now")
      const push = yield* client.post("/console/feed/push", {})
      expect(push.status).toBe(404)
      expect(push.text).toContain("Nothing is published")
      expect((yield* client.post("/console/feed/retry", {})).status).toBe(404)
    })))

  it.scoped("the state before and after Push all now; the feed created once", () =>
    Effect.gen(function*() {
      const server = yield* scriptedFeedServer([{ status: 201, body: feedMetadata }, accepted])
      yield* publishingTo(
        server.baseUrl,
        Effect.gen(function*() {
          const client = yield* signedInConsole()
          const before = (yield* client.get("/console/feed")).text
          expect(before).toContain(server.baseUrl)
          expect(before).toContain("not created yet: the next push creates it")
          expect(before).toMatch(/<dt>Products<\/dt><dd>6<\/dd>/)
          expect(before).toMatch(/<dt>Waiting to be pushed<\/dt><dd>6<\/dd>/)
          expect(before).toContain(`<a href="/console/products/tshirt-classic">tshirt-classic</a>`)
          expect(server.received).toHaveLength(0)

          const pushed = yield* client.post("/console/feed/push", {})
          expect(pushed.status, pushed.text).toBe(303)
          expect(pushed.headers.get("location")).toBe(
            `/console/feed?done=push&sent=${DEMO_PRODUCTS}&failed=0&deferred=0`
          )
          const after = (yield* client.get(pushed.headers.get("location")!)).text
          expect(after).toContain("Pushed every product: 6 products accepted, 0 failed, 0 held by another process")
          expect(after).toContain("feed_scripted")
          expect(after).toMatch(/<dt>Published in their current form<\/dt><dd>6<\/dd>/)
          expect(after).toContain("None: every product is at the Feed API in its current form.")
          expect(server.received.map((r) => r.method)).toEqual(["POST", "PATCH"])
          // A notice is made of numbers only: other text in the query is none.
          const forged = (yield* client.get("/console/feed?done=push&sent=<b>&failed=0&deferred=0")).text
          expect(forged).not.toContain("Pushed every product")
        })
      )
    }), 60_000)

  it.scoped("dead letters with their last error as text; retried, they are due again", () =>
    Effect.gen(function*() {
      const refused = {
        status: 400,
        body: { type: "invalid_request", code: "invalid_product_payload", message: "Bad <img src=x> product" }
      }
      const server = yield* scriptedFeedServer([{ status: 201, body: feedMetadata }, refused])
      yield* publishingTo(
        server.baseUrl,
        Effect.gen(function*() {
          const client = yield* signedInConsole()
          yield* client.get("/console/feed")
          const pushed = yield* client.post("/console/feed/push", {})
          expect(pushed.headers.get("location")).toBe(
            `/console/feed?done=push&sent=0&failed=${DEMO_PRODUCTS}&deferred=0`
          )
          const page = (yield* client.get(pushed.headers.get("location")!)).text
          expect(page).toContain("6 failed (retried with backoff)")
          expect(page).toMatch(/<dt>Dead-lettered<\/dt><dd>6<\/dd>/)
          expect(page).toContain("invalid_product_payload")
          expect(page).toContain("Bad &lt;img src=x&gt; product")
          expect(page).not.toContain("<img")

          const retried = yield* client.post("/console/feed/retry", {})
          expect(retried.status).toBe(303)
          expect(retried.headers.get("location")).toBe(`/console/feed?done=retry&retried=${DEMO_PRODUCTS}`)
          const after = (yield* client.get(retried.headers.get("location")!)).text
          expect(after).toContain("6 dead-lettered products are due again")
          expect(after).toMatch(/<dt>Dead-lettered<\/dt><dd>0<\/dd>/)
          expect(after).toMatch(/<dt>Waiting to be pushed<\/dt><dd>6<\/dd>/)
          const again = yield* client.post("/console/feed/retry", {})
          expect((yield* client.get(again.headers.get("location")!)).text).toContain(
            "No dead-lettered products to retry."
          )
        })
      )
    }), 60_000)

  it.scoped(
    "its forms without the session's CSRF token, or from another site, push nothing",
    () =>
      Effect.gen(function*() {
        const server = yield* scriptedFeedServer([{ status: 201, body: feedMetadata }, accepted])
        yield* publishingTo(
          server.baseUrl,
          Effect.gen(function*() {
            const client = yield* signedInConsole()
            yield* client.get("/console/feed")
            expect((yield* client.post("/console/feed/push", { csrf_token: "" })).status).toBe(403)
            expect((yield* client.post("/console/feed/push", { csrf_token: "A".repeat(22) })).status).toBe(403)
            expect((yield* client.post("/console/feed/push", {}, { "sec-fetch-site": "cross-site" })).status).toBe(403)
            expect((yield* client.post("/console/feed/retry", { csrf_token: "" })).status).toBe(403)
            expect(server.received).toHaveLength(0)
          })
        )
      }),
    60_000
  )

  it.effect("only with the checkout role, as the publication's routes", () =>
    run(
      Effect.gen(function*() {
        const client = yield* signedInConsole()
        expect((yield* client.get("/console/feed")).status).toBe(404)
        expect((yield* client.get("/console/products")).status).toBe(404)
      }),
      ["webhook_receiver"]
    ))
})
