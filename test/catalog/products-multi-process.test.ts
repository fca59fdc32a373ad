/**
 * Products on two real server processes sharing one PostgreSQL database: a price changed through one
 * is what the other's checkout charges within a second (its catalog polls the catalog version), and
 * concurrent writes of one variant from both are ordered by `If-Match`. Needs TEST_DATABASE_URL.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { callServer, databaseClient, type HttpResult, startServer } from "../support/server-process.ts"
import { freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const deployment = (url: string) => ({ DATABASE_URL: url, VAULT_KEY: Buffer.alloc(32, 7).toString("base64") })

const VARIANT = "/products/mug-ceramic/variants/mug-ceramic"

const unitPriceOn = (server: { readonly baseUrl: string }) =>
  Effect.map(
    callServer(server, "POST", "/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] }),
    (created) => {
      expect(created.status).toBe(201)
      return created.body.line_items[0].base_amount as number
    }
  )

describe.skipIf(!hasPostgres)("products on two server processes", () => {
  it.live("a price changed through one process is charged by the other within a second", () =>
    Effect.gen(function*() {
      const url = yield* freshPostgresDatabaseUrl
      const [a, b] = yield* Effect.all([startServer(deployment(url)), startServer(deployment(url))], {
        concurrency: 2
      })
      expect(yield* unitPriceOn(b)).toBe(1400)
      const changed = yield* callServer(a, "PATCH", VARIANT, { unit_amount: 1750 })
      expect(changed.status).toBe(200)
      const start = yield* Clock.currentTimeMillis
      let seen = yield* unitPriceOn(b)
      while (seen !== 1750 && (yield* Clock.currentTimeMillis) - start < 3000) {
        yield* Effect.sleep("50 millis")
        seen = yield* unitPriceOn(b)
      }
      expect(seen).toBe(1750)
      expect((yield* Clock.currentTimeMillis) - start).toBeLessThan(1000)
      // Either process's Products API reads the database.
      expect((yield* callServer(b, "GET", "/products/mug-ceramic")).body.variants[0].unit_amount).toBe(1750)
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live(
    "one variant's stock and price changed from both processes at once: If-Match lets one through",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const [a, b] = yield* Effect.all([startServer(deployment(url)), startServer(deployment(url))], {
          concurrency: 2
        })
        const read = yield* callServer(a, "GET", "/products/mug-ceramic")
        const etag = read.headers.get("etag")!
        const writes: ReadonlyArray<HttpResult> = yield* Effect.all([
          callServer(a, "PATCH", VARIANT, { unit_amount: 1500, stock: 10 }, { "if-match": etag }),
          callServer(b, "PATCH", VARIANT, { unit_amount: 1600, stock: 20 }, { "if-match": etag })
        ], { concurrency: 2 })
        expect(writes.map((w) => w.status).sort()).toEqual([200, 412])
        const winner = writes.find((w) => w.status === 200)!.body.variants[0]
        // Without If-Match both go through, one after the other: the last one written stands, whole.
        const unconditional = yield* Effect.all(
          Array.from(
            { length: 10 },
            (_, i) => callServer(i % 2 === 0 ? a : b, "PATCH", VARIANT, { unit_amount: 2000 + i, stock: 30 + i })
          ),
          { concurrency: "unbounded" }
        )
        expect(unconditional.every((w) => w.status === 200)).toBe(true)
        const versions = unconditional.map((w) => w.body.version as number).sort((x, y) => x - y)
        expect(new Set(versions).size).toBe(10)
        const final = (yield* callServer(a, "GET", "/products/mug-ceramic")).body
        expect(final.version).toBe(versions[9])
        const last = unconditional.find((w) => w.body.version === final.version)!.body.variants[0]
        expect(final.variants[0].unit_amount).toBe(last.unit_amount)
        expect(final.variants[0].stock.on_hand).toBe(last.stock.on_hand)
        expect(final.variants[0].unit_amount - 2000).toBe(final.variants[0].stock.on_hand - 30)
        expect(winner.stock.on_hand === 10 || winner.stock.on_hand === 20).toBe(true)
        const sql = yield* databaseClient(url)
        const stock = yield* sql<{ on_hand: number }>`SELECT on_hand FROM stock WHERE product_id = 'mug-ceramic'`
        expect(Number(stock[0]!.on_hand)).toBe(final.variants[0].stock.on_hand)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})
