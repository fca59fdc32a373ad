/**
 * The order (CONTRACT §8): the full object returned by the merchant's order routes and carried by
 * 2025-09-29 order events (the other versions' events are made from it: `order-event-wire/`), and
 * the merchant's request bodies of the order routes.
 *
 * Shape: `{type: "order", id, checkout_session_id, permalink_url, status, refunds, line_items,
 * fulfillments, adjustments, totals}`. The interface document fixes `type`, `id`,
 * `checkout_session_id`, `permalink_url`, `status`, `refunds` and the sample line item (id, title,
 * quantity {ordered, shipped}, unit_price, subtotal). The rest follows the ACP "Enhanced Order
 * Support" RFC where it does not contradict the interface document:
 *
 * - Line items also carry `product_id`, `kind` (`physical` | `digital`, needed to decide whether a
 *   confirmed order may be fulfilled without shipping), `tax` and `total`.
 * - Fulfillments: `{id: "ful_<n>", type: shipping | digital, status, line_items: [{id, quantity}],
 *   carrier?, tracking_number?, tracking_url?, events: [{id, type, occurred_at}]}`.
 * - Adjustments are an append-only log: `{id: "adj_<n>", type: refund | credit | cancellation,
 *   status: "completed", occurred_at, amount?}`.
 * - Totals are the checkout totals at completion (the `total` entry stays the amount charged),
 *   plus `amount_refunded` once anything is refunded.
 *
 * How an order moves is `order-state-machine.ts`; how a completed checkout becomes one is
 * `order-from-checkout.ts`.
 */
import { Schema } from "effect"
import { TotalType } from "../../catalog/model/line-items.ts"
import { Amount, BoundedString, optional, PositiveAmount, Timestamp } from "../../shared/schema-helpers.ts"

export const OrderStatus = Schema.Literal("created", "manual_review", "confirmed", "canceled", "shipped", "fulfilled")
export type OrderStatus = typeof OrderStatus.Type
export const ORDER_STATUSES: ReadonlyArray<OrderStatus> = OrderStatus.literals

export const RefundType = Schema.Literal("store_credit", "original_payment")
export type RefundType = typeof RefundType.Type

export const Refund = Schema.Struct({
  type: RefundType,
  amount: Amount
}).annotations({ identifier: "Refund" })
export type Refund = typeof Refund.Type

export const OrderLineItemKind = Schema.Literal("physical", "digital")
export type OrderLineItemKind = typeof OrderLineItemKind.Type

export const OrderLineItemQuantity = Schema.Struct({
  ordered: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" })),
  shipped: Schema.Int.pipe(Schema.nonNegative({ message: () => "must be a non-negative integer" }))
}).annotations({ identifier: "OrderLineItemQuantity" })
export type OrderLineItemQuantity = typeof OrderLineItemQuantity.Type

export const OrderLineItem = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  product_id: Schema.String,
  kind: OrderLineItemKind,
  quantity: OrderLineItemQuantity,
  unit_price: Amount,
  subtotal: Amount,
  tax: Amount,
  total: Amount
}).annotations({ identifier: "OrderLineItem" })
export type OrderLineItem = typeof OrderLineItem.Type

export const LineItemReference = Schema.Struct({
  id: Schema.String,
  quantity: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
}).annotations({ identifier: "LineItemReference" })
export type LineItemReference = typeof LineItemReference.Type

export const FulfillmentType = Schema.Literal("shipping", "digital")
export type FulfillmentType = typeof FulfillmentType.Type

/** ACP fulfillment statuses; this service sets `shipped` and `delivered` (and `canceled` never yet). */
export const FulfillmentStatus = Schema.Literal(
  "pending",
  "processing",
  "shipped",
  "in_transit",
  "out_for_delivery",
  "delivered",
  "failed",
  "canceled"
)
export type FulfillmentStatus = typeof FulfillmentStatus.Type

export const FulfillmentEventType = Schema.Literal("shipped", "delivered")
export type FulfillmentEventType = typeof FulfillmentEventType.Type

export const FulfillmentEvent = Schema.Struct({
  id: Schema.String,
  type: FulfillmentEventType,
  occurred_at: Timestamp
}).annotations({ identifier: "FulfillmentEvent" })
export type FulfillmentEvent = typeof FulfillmentEvent.Type

export const Fulfillment = Schema.Struct({
  id: Schema.String,
  type: FulfillmentType,
  status: FulfillmentStatus,
  line_items: Schema.Array(LineItemReference),
  carrier: optional(Schema.String),
  tracking_number: optional(Schema.String),
  tracking_url: optional(Schema.String),
  events: Schema.Array(FulfillmentEvent)
}).annotations({ identifier: "Fulfillment" })
export type Fulfillment = typeof Fulfillment.Type

export const AdjustmentType = Schema.Literal("refund", "credit", "cancellation")
export type AdjustmentType = typeof AdjustmentType.Type

export const Adjustment = Schema.Struct({
  id: Schema.String,
  type: AdjustmentType,
  status: Schema.Literal("completed"),
  occurred_at: Timestamp,
  amount: optional(Amount)
}).annotations({ identifier: "Adjustment" })
export type Adjustment = typeof Adjustment.Type

/** Checkout total types plus `amount_refunded` (ACP orders RFC). */
export const OrderTotalType = Schema.Literal(...TotalType.literals, "amount_refunded")
export type OrderTotalType = typeof OrderTotalType.Type

export const OrderTotal = Schema.Struct({
  type: OrderTotalType,
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "OrderTotal" })
export type OrderTotal = typeof OrderTotal.Type

/**
 * The order as the complete response shows it (the interface document's checkout-API `Order`,
 * hence its OpenAPI name); the full order is `Order` below.
 */
export const OrderSummary = Schema.Struct({
  id: Schema.String,
  checkout_session_id: Schema.String,
  permalink_url: Schema.String
}).annotations({ identifier: "Order" })
export type OrderSummary = typeof OrderSummary.Type

/**
 * The full order. The complete response shows only its `OrderSummary`
 * `{id, checkout_session_id, permalink_url}` (`src/checkout/session/schemas.ts`; see `toOrderSummary`).
 */
export const Order = Schema.Struct({
  type: Schema.Literal("order"),
  id: Schema.String,
  checkout_session_id: Schema.String,
  permalink_url: Schema.String,
  status: OrderStatus,
  refunds: Schema.Array(Refund),
  line_items: Schema.Array(OrderLineItem),
  fulfillments: Schema.Array(Fulfillment),
  adjustments: Schema.Array(Adjustment),
  totals: Schema.Array(OrderTotal)
}).annotations({ identifier: "FullOrder" })
export type Order = typeof Order.Type

/** Merchant request bodies for the commands that carry data (for the order routes). */
export const ShipRequest = Schema.Struct({
  carrier: BoundedString(128),
  tracking_number: BoundedString(128),
  tracking_url: optional(BoundedString(2048))
}).annotations({ identifier: "ShipRequest" })
export type ShipRequest = typeof ShipRequest.Type

export const RefundRequest = Schema.Struct({
  type: RefundType,
  amount: PositiveAmount
}).annotations({ identifier: "RefundRequest" })
export type RefundRequest = typeof RefundRequest.Type
