/**
 * The order (CONTRACT §8): the full object of the merchant's order routes and of 2025-09-29 order events
 * (the other versions' bodies are made from it: `../wire/acp/`), and the merchant's request bodies.
 * Fields beyond the interface document's follow the ACP "Enhanced Order Support" RFC; a line's `kind`
 * decides whether a confirmed order may be fulfilled without shipping. Moves: `order-state-machine.ts`.
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

/** ACP fulfillment statuses; this service sets only `shipped` and `delivered`. */
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

export const AdjustmentType = Schema.Literal("refund", "credit", "cancellation", "dispute")
export type AdjustmentType = typeof AdjustmentType.Type

/** `pending` and `failed` only for a dispute: open, or decided for the merchant (nothing goes back). */
export const AdjustmentStatus = Schema.Literal("pending", "completed", "failed")
export type AdjustmentStatus = typeof AdjustmentStatus.Type

/**
 * An entry of the order's append-only log (`adj_<n>`); a cancellation has no amount. Only a dispute's
 * status changes after it is added. `payment_reference` is the payment provider's id of what moved the
 * money (a Stripe refund `re_…`, a dispute `dp_…`): what the provider's notifications are matched by.
 * `request_reference` names the merchant request that asked for a refund (a hash of its
 * Idempotency-Key): a retry of it finds its refund recorded. Neither is in any ACP event.
 */
export const Adjustment = Schema.Struct({
  id: Schema.String,
  type: AdjustmentType,
  status: AdjustmentStatus,
  occurred_at: Timestamp,
  amount: optional(Amount),
  reason: optional(Schema.String),
  payment_reference: optional(Schema.String),
  request_reference: optional(Schema.String)
}).annotations({ identifier: "Adjustment" })
export type Adjustment = typeof Adjustment.Type

/** Checkout total types plus `amount_refunded` (ACP orders RFC); the `total` entry stays the amount charged. */
export const OrderTotalType = Schema.Literal(...TotalType.literals, "amount_refunded")
export type OrderTotalType = typeof OrderTotalType.Type

export const OrderTotal = Schema.Struct({
  type: OrderTotalType,
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "OrderTotal" })
export type OrderTotal = typeof OrderTotal.Type

/** What the complete response shows of an order (the interface document's checkout-API `Order`, hence its name). */
export const OrderSummary = Schema.Struct({
  id: Schema.String,
  checkout_session_id: Schema.String,
  permalink_url: Schema.String
}).annotations({ identifier: "Order" })
export type OrderSummary = typeof OrderSummary.Type

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
