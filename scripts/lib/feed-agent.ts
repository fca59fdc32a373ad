/**
 * The agent's first step in the demo: reading the merchant's product feed (ACP 2026-04-17) where the
 * agent platform hosts it. The feed's id comes from the merchant's `GET /feed-publication`; its products
 * from `GET /feeds/{id}/products` with the agent key, which owns the feed when the server publishes to
 * its own Feed API (the development default). Never throws: without a feed it says why.
 */
import type { Call } from "./acp-client.ts"

/** The one version of the Feed API. */
export const FEED_API_VERSION = "2026-04-17"

export interface FeedVariant {
  readonly productId: string
  readonly productTitle: string
  /** The item id checkout takes. */
  readonly id: string
  readonly title: string
  readonly price: { readonly amount: number; readonly currency: string } | undefined
  readonly available: boolean
  /** The feed's availability status (`in_stock`, `out_of_stock`, `preorder`, …), when given. */
  readonly status: string | undefined
}

export type FeedReading =
  | { readonly found: true; readonly feedId: string; readonly apiUrl: string; readonly variants: Array<FeedVariant> }
  | { readonly found: false; readonly reason: string }

export interface FeedCalls {
  /** With the merchant key: `GET /feed-publication`. */
  readonly merchant: Call
  /** With the agent key and `API-Version: 2026-04-17`: the hosted Feed API. */
  readonly agent: Call
}

const UNSOLD = new Set(["out_of_stock", "discontinued"])

/** Every variant of the feed's products, in the feed's order. */
export const variantsOf = (products: ReadonlyArray<any>): Array<FeedVariant> =>
  products.flatMap((product) =>
    (product.variants ?? []).map((variant: any): FeedVariant => {
      const status = variant.availability?.status as string | undefined
      return {
        productId: product.id,
        productTitle: product.title ?? variant.title,
        id: variant.id,
        title: variant.title,
        price: variant.price,
        available: variant.availability?.available !== false && !UNSOLD.has(status ?? ""),
        status
      }
    })
  )

/**
 * The variant the agent buys: `wanted` when it is available with a price, else the first such variant, one in
 * stock before any other.
 */
export const pickVariant = (variants: ReadonlyArray<FeedVariant>, wanted?: string): FeedVariant | undefined => {
  const buyable = variants.filter((variant) => variant.available && variant.price !== undefined)
  return buyable.find((variant) => variant.id === wanted) ??
    buyable.find((variant) => variant.status === undefined || variant.status === "in_stock") ?? buyable[0]
}

/** The 2026-04-17 item's `suggested_price`: what the agent saw in the feed (the catalog's price still applies). */
export const suggestedPriceOf = (feedId: string, variant: FeedVariant, observedAt: Date) =>
  variant.price === undefined
    ? undefined
    : { amount: variant.price.amount, source: { feed_id: feedId }, observed_at: observedAt.toISOString() }

const pause = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

const describeFailure = (what: string, answer: { status: number; body: any }) =>
  `${what} answered ${answer.status}${answer.body?.code === undefined ? "" : ` ${answer.body.code}`}`

/**
 * The merchant's feed as the agent reads it. A server that has just started may not have pushed yet: it
 * waits up to `waitMillis` for the feed to exist and hold products.
 */
export const readMerchantFeed = async (calls: FeedCalls, waitMillis = 10_000): Promise<FeedReading> => {
  const deadline = Date.now() + waitMillis
  try {
    for (;;) {
      const publication = await calls.merchant("GET", "/feed-publication")
      if (publication.status === 404) {
        const why = "FEED_API_URL off, or unset in production or without the server's Feed API"
        return { found: false, reason: `the merchant publishes no feed (${why})` }
      }
      if (publication.status !== 200) {
        return { found: false, reason: describeFailure("GET /feed-publication", publication) }
      }
      const feedId = publication.body.feed_id as string | null
      const apiUrl = publication.body.api_url as string
      if (feedId !== null) {
        const read = await calls.agent("GET", `/feeds/${encodeURIComponent(feedId)}/products`)
        if (read.status === 404) {
          return { found: false, reason: `feed ${feedId} is published to ${apiUrl}, not hosted by this agent platform` }
        }
        if (read.status !== 200) {
          return { found: false, reason: describeFailure(`GET /feeds/${feedId}/products`, read) }
        }
        const variants = variantsOf(read.body.products ?? [])
        if (variants.length > 0 || Date.now() >= deadline) return { found: true, feedId, apiUrl, variants }
      } else if (Date.now() >= deadline) {
        return { found: false, reason: `the feed is not created yet at ${apiUrl} (see GET /feed-publication)` }
      }
      await pause(200)
    }
  } catch (error) {
    return { found: false, reason: `the feed could not be read: ${error instanceof Error ? error.message : error}` }
  }
}
