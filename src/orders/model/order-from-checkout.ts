/** How a completed checkout becomes an order, and what the checkout's complete response shows of it. */
import { type LineItem, type Total } from "../../catalog/model/line-items.ts"
import type { Order, OrderLineItemKind } from "./order.ts"
import { type OrderSummary } from "./order.ts"

/** A checkout line item plus what the catalog knows of its product. */
export type OrderSourceLineItem = LineItem & {
  readonly title: string
  readonly kind: OrderLineItemKind
}

export interface MakeOrderInput {
  readonly id: string
  readonly checkoutSessionId: string
  readonly permalinkUrl: string
  readonly lineItems: ReadonlyArray<OrderSourceLineItem>
  readonly totals: ReadonlyArray<Total>
}

/** The initial `created` order; `unit_price` is exact, a line's `base_amount` being unit price × quantity. */
export const makeOrder = (input: MakeOrderInput): Order => ({
  type: "order",
  id: input.id,
  checkout_session_id: input.checkoutSessionId,
  permalink_url: input.permalinkUrl,
  status: "created",
  refunds: [],
  line_items: input.lineItems.map((line) => ({
    id: line.id,
    title: line.title,
    product_id: line.item.id,
    kind: line.kind,
    quantity: { ordered: line.item.quantity, shipped: 0 },
    unit_price: line.item.quantity > 0 ? Math.round(line.base_amount / line.item.quantity) : line.base_amount,
    subtotal: line.subtotal,
    tax: line.tax,
    total: line.total
  })),
  fulfillments: [],
  adjustments: [],
  totals: input.totals.map((t) => ({ type: t.type, display_text: t.display_text, amount: t.amount }))
})

export const toOrderSummary = (order: Order): OrderSummary => ({
  id: order.id,
  checkout_session_id: order.checkout_session_id,
  permalink_url: order.permalink_url
})
