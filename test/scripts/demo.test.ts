/**
 * `npm run demo` (`scripts/demo.ts`) against a real server process. With the development default the
 * server publishes its products to its own Feed API, and the demo reads that feed as the agent and buys
 * a variant found there (in 2026-04-17 with the feed's price as `suggested_price`); with
 * `FEED_API_URL=off` it says there is no feed and buys the catalog's items, as before feeds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import {
  callServer,
  PROCESS_API_KEY,
  PROCESS_MERCHANT_API_KEY,
  PROJECT_ROOT,
  type ServerProcess,
  startServer
} from "../support/server-process.ts"

const TSX = join(PROJECT_ROOT, "node_modules", ".bin", "tsx")

const runDemo = (server: ServerProcess, args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        TSX,
        ["scripts/demo.ts", ...args],
        {
          cwd: PROJECT_ROOT,
          env: {
            PATH: process.env["PATH"] ?? "",
            HOME: process.env["HOME"] ?? "",
            BASE_URL: server.baseUrl,
            API_KEY: PROCESS_API_KEY,
            MERCHANT_API_KEY: PROCESS_MERCHANT_API_KEY
          },
          timeout: 90_000
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
          resolve({ code, output: stdout + stderr })
        }
      )
    })
  )

const V0417 = { "api-version": "2026-04-17" }

describe("npm run demo", () => {
  it.live(
    "reads the server's own feed and buys a variant found there, its feed price suggested",
    () =>
      Effect.gen(function*() {
        const server = yield* startServer({})
        const { code, output } = yield* runDemo(server, ["--api-version", "2026-04-17"])
        expect(output, output).toContain("Done.")
        expect(code).toBe(0)

        const feedId = /feed (feed_\w+) at http:\/\/127\.0\.0\.1:/.exec(output)?.[1]
        const bought = /buying (\S+) \(/.exec(output)?.[1]
        const sessionId = /session (\S+) · status /.exec(output)?.[1]
        expect({ feedId, bought, sessionId }).toEqual({
          feedId: expect.any(String),
          bought: expect.any(String),
          sessionId: expect.any(String)
        })

        // The feed the merchant published, read with the agent key: the variant bought is in it, available.
        const publication = yield* callServer(server, "GET", "/feed-publication")
        expect(publication.body).toMatchObject({ feed_id: feedId, api_url: server.baseUrl, dead: [] })
        const feed = yield* callServer(server, "GET", `/feeds/${feedId}/products`, undefined, V0417)
        expect(feed.status).toBe(200)
        const variants = (feed.body.products as Array<any>).flatMap((product) => product.variants)
        const variant = variants.find((v) => v.id === bought)
        expect(variant?.availability).toMatchObject({ available: true })

        // The session bought that variant and no other; the feed's price is the catalog's: no info message.
        const session = yield* callServer(server, "GET", `/checkout_sessions/${sessionId}`, undefined, V0417)
        expect(session.body.status).toBe("completed")
        expect(session.body.line_items.map((line: any) => line.item.id)).toEqual([bought])
        expect(totalOf(session.body.line_items[0].totals, "items_base_amount")).toBe(variant.price.amount)
        expect(JSON.stringify(session.body.messages ?? [])).not.toContain(`of feed ${feedId}`)

        // The start push went to the server's own Feed API once it listened: no failure logged.
        expect(server.output()).not.toMatch(/feed push .*failed|feed push .*waits/)
      }).pipe(Effect.scoped),
    150_000
  )

  it.live("without a feed (FEED_API_URL=off) says so and buys the catalog's items", () =>
    Effect.gen(function*() {
      const server = yield* startServer({ FEED_API_URL: "off" })
      const { code, output } = yield* runDemo(server, [])
      expect(output, output).toContain("Done.")
      expect(code).toBe(0)
      expect(output).toContain("no feed: the merchant publishes no feed")
      expect(output).toContain("two T-shirts and a mug")
      const sessionId = /session (\S+) · status /.exec(output)?.[1]
      const session = yield* callServer(server, "GET", `/checkout_sessions/${sessionId}`)
      expect(session.body.status).toBe("completed")
      expect(session.body.line_items.map((line: any) => line.item.id)).toEqual(["tshirt-classic", "mug-ceramic"])
    }).pipe(Effect.scoped), 150_000)
})

const totalOf = (totals: ReadonlyArray<{ type: string; amount: number }>, type: string) =>
  totals.find((total) => total.type === type)?.amount
