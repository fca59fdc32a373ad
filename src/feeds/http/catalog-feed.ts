/**
 * The merchant's whole catalog in the feed form (2026-04-17 `Product`s), each checked against the
 * schema: what the publisher pushes and what `GET /feed-publication/products` (the file form) shows.
 * Archived products are included: the Feed API cannot delete, so they are sent unavailable.
 */
import { Effect, Either } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { ProductStore } from "../../catalog/product-store.ts"
import { sha256 } from "../../shared/sha256.ts"
import { feedProductOf, type VariantStock } from "../wire/acp/catalog-products.ts"
import { validateFeedProduct } from "../wire/acp/feed-validation.ts"
import type { Product } from "../wire/acp/v2026-04-17.ts"

export type CatalogFeedEntry =
  | { readonly _tag: "Valid"; readonly id: string; readonly product: Product; readonly hash: string }
  /** Never sent: the merchant's product fails the feed schema (`reason` names where). */
  | { readonly _tag: "Invalid"; readonly id: string; readonly reason: string }

const PAGE = 200

export const catalogFeed = Effect.gen(function*() {
  const products = yield* ProductStore
  const snapshot = yield* Effect.flatMap(Catalog, (catalog) => catalog.current)
  const context = { currency: snapshot.currency, merchantName: undefined, links: snapshot.links }
  const entries: Array<CatalogFeedEntry> = []
  let after: string | undefined
  for (;;) {
    const page = yield* products.list({ archived: true, after, limit: PAGE })
    for (const { product, stock } of page) {
      const form = feedProductOf(product, new Map<string, VariantStock>(stock), context)
      const valid = validateFeedProduct(form)
      entries.push(
        Either.isRight(valid)
          ? { _tag: "Valid", id: product.id, product: form, hash: sha256(JSON.stringify(form)).toString("hex") }
          : {
            _tag: "Invalid",
            id: product.id,
            reason: `not a feed Product at ${valid.left.param}: ${valid.left.message}`
          }
      )
    }
    if (page.length < PAGE) return entries
    after = page[page.length - 1]!.product.id
  }
})
