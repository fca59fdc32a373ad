/**
 * The Cart API's wire format, ACP 2026-04-17 only (`schema.cart.json`): requests as its `CartCreateRequest`
 * and `CartUpdateRequest` (no field beyond them), the `Cart` answer built from a priced cart. Items and
 * buyer are the checkout wire's types of the same version, so this lives at the edge, which may use them.
 */
import { Schema } from "effect"
import { MAX_ITEMS } from "../../catalog/model/line-items.ts"
import { buyerOf, RequestItem, Text } from "../../checkout/wire/acp/line-items-request-schemas.ts"
import { Amount, CurrencyCode, JsonPath, optional, Timestamp } from "../../shared/schema-helpers.ts"
import type { Cart, CartContents, JsonObject } from "../model/cart.ts"
import type { CartEstimate, CartNotice, EstimatedLine } from "../model/estimate.ts"

export const CART_API_VERSION = "2026-04-17"

const LineItems = Schema.Array(RequestItem).pipe(
  Schema.minItems(1, { message: () => "must contain at least 1 item" }),
  Schema.maxItems(MAX_ITEMS, { message: () => `must contain at most ${MAX_ITEMS} items` })
)
const Buyer = buyerOf(CART_API_VERSION)

export const CartCreateRequest = Schema.Struct({
  line_items: LineItems,
  buyer: optional(Buyer),
  locale: optional(Text(35))
}).annotations({ identifier: "CartCreateRequest" })

export const CartUpdateRequest = Schema.Struct({
  line_items: LineItems,
  buyer: optional(Buyer)
}).annotations({ identifier: "CartUpdateRequest" })

type ItemsRequest = { readonly line_items: typeof LineItems.Type; readonly buyer?: typeof Buyer.Type }

/** A quantity left out is 1, as in a checkout of this version. */
export const contentsOf = (request: ItemsRequest): CartContents => ({
  items: request.line_items.map((item) => ({ id: item.id, quantity: item.quantity ?? 1 })),
  buyer: request.buyer as JsonObject | undefined
})

const Total = Schema.Struct({
  type: Schema.Literal("items_base_amount", "subtotal", "tax", "total"),
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "Total" })

const LineItem = Schema.Struct({
  id: Schema.String,
  item: Schema.Struct({ id: Schema.String, name: optional(Schema.String), unit_amount: optional(Amount) }),
  quantity: Schema.Int,
  name: optional(Schema.String),
  unit_amount: optional(Amount),
  availability_status: optional(Schema.Literal("in_stock", "out_of_stock")),
  totals: Schema.Array(Total)
}).annotations({ identifier: "LineItem" })

const Message = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("info"),
    content_type: Schema.Literal("plain"),
    content: Schema.String
  }).annotations({ identifier: "MessageInfo" }),
  Schema.Struct({
    type: Schema.Literal("error"),
    code: Schema.Literal("out_of_stock", "not_found"),
    param: JsonPath,
    content_type: Schema.Literal("plain"),
    content: Schema.String
  }).annotations({ identifier: "MessageError" })
)

export const CartWire = Schema.Struct({
  id: Schema.String,
  line_items: Schema.Array(LineItem),
  buyer: optional(Buyer),
  currency: CurrencyCode,
  totals: Schema.Array(Total),
  messages: Schema.Array(Message),
  continue_url: Schema.String,
  expires_at: Timestamp
}).annotations({ identifier: "Cart" })
export type CartWire = typeof CartWire.Type

const total = (type: typeof Total.Type["type"], display_text: string, amount: number) => ({
  type,
  display_text,
  amount
})

const lineItem = (line: EstimatedLine): typeof LineItem.Type => {
  const quantity = line.item.quantity
  if (line.product === undefined) return { id: line.id, item: { id: line.item.id }, quantity, totals: [] }
  const { title, unit_amount } = line.product
  return {
    id: line.id,
    item: { id: line.item.id, name: title, unit_amount },
    quantity,
    name: title,
    unit_amount,
    ...(line.availability === undefined ? {} : { availability_status: line.availability }),
    totals: [
      total("subtotal", "Subtotal", line.subtotal),
      ...(line.tax === undefined ? [] : [total("tax", "Estimated tax", line.tax)])
    ]
  }
}

const message = (notice: CartNotice): typeof Message.Type =>
  notice.index === undefined
    ? { type: "info", content_type: "plain", content: notice.content }
    : {
      type: "error",
      code: notice.kind === "unknown_item" ? "not_found" : "out_of_stock",
      param: `$.line_items[${notice.index}]`,
      content_type: "plain",
      content: notice.content
    }

/** The Cart answered; `continueUrl` is the buyer page of the cart's hand-off token. */
export const cartWire = (cart: Cart, estimate: CartEstimate, continueUrl: string): CartWire => ({
  id: cart.id,
  line_items: estimate.lines.map(lineItem),
  ...(cart.buyer === undefined ? {} : { buyer: cart.buyer as typeof Buyer.Type }),
  currency: estimate.currency,
  totals: [
    total("subtotal", "Subtotal", estimate.subtotal),
    ...(estimate.tax === undefined ? [] : [total("tax", "Estimated tax", estimate.tax)]),
    total("total", "Estimated total", estimate.total)
  ],
  messages: estimate.notices.map(message),
  continue_url: continueUrl,
  expires_at: new Date(cart.expiresAt).toISOString()
})
