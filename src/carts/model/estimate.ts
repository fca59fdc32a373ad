/**
 * A cart's estimated, non-authoritative price: each known item priced by the checkout's own line
 * rule (`priceLineItem`), tax only where a tax rule can be resolved, never fulfillment or payment.
 * Availability is read, never reserved: an item asked beyond what is available is reported, not dropped.
 */
import type { CatalogSnapshot, Product } from "../../catalog/model/catalog.ts"
import type { Address } from "../../catalog/model/fulfillment.ts"
import type { Item } from "../../catalog/model/line-items.ts"
import { priceLineItem, resolveTaxRule } from "../../checkout/pricing/pricing.ts"
import { sumAmounts } from "../../shared/money.ts"
import { requestedUnits } from "./cart.ts"

export type Availability = "in_stock" | "out_of_stock"

export interface EstimatedLine {
  readonly id: string
  readonly item: Item
  /** Absent: the catalog does not sell this item. */
  readonly product: Product | undefined
  readonly availability: Availability | undefined
  readonly baseAmount: number
  readonly subtotal: number
  /** Absent when no tax rule applies to the cart (no address to resolve one). */
  readonly tax: number | undefined
}

export interface CartNotice {
  readonly kind: "unknown_item" | "out_of_stock" | "estimate"
  /** The line's index in `items`; absent for the cart as a whole. */
  readonly index: number | undefined
  readonly content: string
}

export interface CartEstimate {
  readonly currency: string
  readonly lines: ReadonlyArray<EstimatedLine>
  readonly subtotal: number
  readonly tax: number | undefined
  readonly total: number
  readonly notices: ReadonlyArray<CartNotice>
  /** No item can be bought: unknown or out of stock, every one. */
  readonly nothingAvailable: boolean
}

export interface EstimateInput {
  readonly items: ReadonlyArray<Item>
  readonly catalog: CatalogSnapshot
  /** Units available per product now (on hand less live reservations). */
  readonly available: ReadonlyMap<string, number>
  /** Where tax would be owed; the cart request of 2026-04-17 carries none, so usually absent. */
  readonly address: Pick<Address, "country" | "state"> | undefined
  /** A line's id by its index (stable for one cart and position). */
  readonly lineId: (index: number) => string
}

export const estimateCart = (input: EstimateInput): CartEstimate => {
  const { address, available, catalog, items } = input
  const rule = resolveTaxRule(catalog.taxRules, address)
  const requested = requestedUnits(items)
  const notices: Array<CartNotice> = []
  const lines = items.map((item, index): EstimatedLine => {
    const product = catalog.products.get(item.id)
    const id = input.lineId(index)
    if (product === undefined) {
      notices.push({ kind: "unknown_item", index, content: `${item.id} is not sold by this merchant.` })
      return { id, item, product, availability: undefined, baseAmount: 0, subtotal: 0, tax: undefined }
    }
    // An archived or merchant-withdrawn variant is not sold, whatever its stock.
    const units = product.unavailable === undefined ? available.get(item.id) ?? 0 : 0
    const availability: Availability = (requested.get(item.id) ?? 0) <= units ? "in_stock" : "out_of_stock"
    if (availability === "out_of_stock") {
      notices.push({
        kind: "out_of_stock",
        index,
        content: product.unavailable === "archived"
          ? `${product.title} is no longer sold.`
          : units === 0
          ? `${product.title} is currently out of stock.`
          : `Only ${units} of ${product.title} are available.`
      })
    }
    const priced = priceLineItem({ id, item, product }, rule)
    return {
      id,
      item,
      product,
      availability,
      baseAmount: priced.base_amount,
      subtotal: priced.subtotal,
      tax: rule === undefined ? undefined : priced.tax
    }
  })
  const subtotal = sumAmounts(lines.map((line) => line.subtotal))
  const tax = rule === undefined ? undefined : sumAmounts(lines.map((line) => line.tax ?? 0))
  notices.push({
    kind: "estimate",
    index: undefined,
    content: tax === undefined
      ? "Estimated total: tax and shipping are calculated at checkout."
      : "Estimated total: shipping is calculated at checkout."
  })
  return {
    currency: catalog.currency,
    lines,
    subtotal,
    tax,
    total: sumAmounts([subtotal, tax ?? 0]),
    notices,
    nothingAvailable: lines.every((line) => line.availability !== "in_stock")
  }
}
