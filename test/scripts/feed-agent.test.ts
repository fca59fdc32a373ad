/**
 * The demo's reading of the merchant's feed (`scripts/lib/feed-agent.ts`) over scripted answers: the
 * variants and the one picked, waiting for a feed a new server has not pushed yet, and each way there
 * is no feed (it never throws). Against a real server: `demo.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Call, CallResult } from "../../scripts/lib/acp-client.ts"
import { pickVariant, readMerchantFeed, suggestedPriceOf, variantsOf } from "../../scripts/lib/feed-agent.ts"

const variant = (id: string, availability: unknown, amount = 1000) => ({
  id,
  title: `Variant ${id}`,
  price: { amount, currency: "USD" },
  availability
})

const PRODUCTS = [
  { id: "p1", title: "One", variants: [variant("gone", { available: false, status: "discontinued" })] },
  {
    id: "p2",
    title: "Two",
    variants: [
      variant("sold-out", { available: false, status: "out_of_stock" }),
      variant("later", { available: true, status: "preorder" }),
      variant("now", { available: true, status: "in_stock" }, 2500)
    ]
  }
]

/** A `Call` answering each path from `answers` in turn (the last one repeated). */
const scripted = (answers: Record<string, Array<CallResult>>): Call => async (_method, path) => {
  const queue = answers[path]
  if (queue === undefined) throw new Error(`unexpected ${path}`)
  return queue.length > 1 ? queue.shift()! : queue[0]!
}

const status = (feedId: string | null) => ({
  status: 200,
  body: { api_url: "http://127.0.0.1:8080", feed_id: feedId, products: 2, published: 0, pending: [], dead: [] }
})

describe("the demo's feed reading", () => {
  it("lists every variant, and picks an available one in stock before a preorder", () => {
    const variants = variantsOf(PRODUCTS)
    expect(variants.map((v) => [v.id, v.available])).toEqual([
      ["gone", false],
      ["sold-out", false],
      ["later", true],
      ["now", true]
    ])
    expect(variants[3]).toMatchObject({ productId: "p2", productTitle: "Two", status: "in_stock" })
    expect(pickVariant(variants)?.id).toBe("now")
    expect(pickVariant(variants, "later")?.id).toBe("later")
    expect(pickVariant(variants, "sold-out")?.id).toBe("now")
    expect(pickVariant(variants.filter((v) => v.id !== "now"))?.id).toBe("later")
    expect(pickVariant(variants.slice(0, 2))).toBeUndefined()
    const observed = new Date("2026-05-01T10:00:00Z")
    expect(suggestedPriceOf("feed_x", variants[3]!, observed)).toEqual({
      amount: 2500,
      source: { feed_id: "feed_x" },
      observed_at: "2026-05-01T10:00:00.000Z"
    })
  })

  it("waits for the feed a new server is still creating and pushing", async () => {
    const reading = await readMerchantFeed({
      merchant: scripted({ "/feed-publication": [status(null), status("feed_a")] }),
      agent: scripted({
        "/feeds/feed_a/products": [{ status: 200, body: { products: [] } }, {
          status: 200,
          body: { products: PRODUCTS }
        }]
      })
    }, 5_000)
    expect(reading).toMatchObject({ found: true, feedId: "feed_a", apiUrl: "http://127.0.0.1:8080" })
    expect(reading.found && reading.variants).toHaveLength(4)
  })

  it("says why there is no feed, and never throws", async () => {
    const noPublication = await readMerchantFeed({
      merchant: scripted({ "/feed-publication": [{ status: 404, body: { code: "not_found" } }] }),
      agent: scripted({})
    })
    expect(noPublication).toMatchObject({ found: false, reason: expect.stringContaining("publishes no feed") })

    const elsewhere = await readMerchantFeed({
      merchant: scripted({ "/feed-publication": [status("feed_b")] }),
      agent: scripted({ "/feeds/feed_b/products": [{ status: 404, body: { code: "feed_not_found" } }] })
    })
    expect(elsewhere).toMatchObject({ found: false, reason: expect.stringContaining("not hosted by this") })

    const notYet = await readMerchantFeed({
      merchant: scripted({ "/feed-publication": [status(null)] }),
      agent: scripted({})
    }, 300)
    expect(notYet).toMatchObject({ found: false, reason: expect.stringContaining("not created yet") })

    const unreachable = await readMerchantFeed({
      merchant: () => Promise.reject(new Error("fetch failed")),
      agent: scripted({})
    })
    expect(unreachable).toMatchObject({ found: false, reason: expect.stringContaining("fetch failed") })
  })
})
