/** Items, line items and totals, as every feature states a price: integer minor units of the catalog's currency. */
import { Schema } from "effect"
import { Amount, BoundedString } from "../../shared/schema-helpers.ts"

export const MAX_QUANTITY = 10_000
export const MAX_ITEMS = 100

export const Item = Schema.Struct({
  id: BoundedString(256, "Product identifier"),
  quantity: Schema.Int.pipe(
    Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" }),
    Schema.lessThanOrEqualTo(MAX_QUANTITY, { message: () => `must be at most ${MAX_QUANTITY}` })
  )
}).annotations({ identifier: "Item" })
export type Item = typeof Item.Type

export const LineItem = Schema.Struct({
  id: Schema.String,
  item: Item,
  base_amount: Amount,
  discount: Amount,
  subtotal: Amount,
  tax: Amount,
  total: Amount
}).annotations({ identifier: "LineItem" })
export type LineItem = typeof LineItem.Type

export const TotalType = Schema.Literal(
  "items_base_amount",
  "items_discount",
  "subtotal",
  "discount",
  "fulfillment",
  "tax",
  "fee",
  "total"
)
export type TotalType = typeof TotalType.Type

export const Total = Schema.Struct({
  type: TotalType,
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "Total" })
export type Total = typeof Total.Type

/** The total types of 2025-09-29 and those 2026-01-30 adds. */
export const TOTAL_TYPES_20260130 = [...TotalType.literals, "gift_wrap", "tip", "store_credit"] as const

/** The `Total.type` values of 2026-04-17; orders use `amount_refunded`, sessions never do. */
export const TotalType20260417 = Schema.Literal(...TOTAL_TYPES_20260130, "amount_refunded")
