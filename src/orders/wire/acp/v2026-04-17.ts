/**
 * Order events in 2026-04-17: `data` is the checkout spec's `Order` plus `type: "order"` (no `refunds`:
 * `adjustments` instead), sent with every field we hold data for, received leniently as the version
 * asks (open enums, the release-day shape). Details: `docs/order-events.md`.
 */
import { Schema } from "effect"
import { TotalType20260417 } from "../../../catalog/model/line-items.ts"
import { optional } from "../../../shared/schema-helpers.ts"
import type { OrderEvent } from "../../model/order-event.ts"
import type { AdjustmentType, Order, OrderLineItem, OrderStatus } from "../../model/order.ts"
import { boundedText, JsonObject, OpenValue } from "./received-values.ts"

// Sent: exactly what this service posts, a subset of the official schema.

const Count = Schema.Int.pipe(Schema.nonNegative())
const PositiveCount = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))

const Total20260417 = Schema.Struct({
  type: TotalType20260417,
  display_text: Schema.String,
  amount: Schema.Int
})

const LineItemReference20260417 = Schema.Struct({ id: Schema.String, quantity: PositiveCount })

const OrderLineItem20260417 = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  product_id: Schema.String,
  quantity: Schema.Struct({ ordered: PositiveCount, current: Count, fulfilled: Count }),
  unit_price: Schema.Int,
  subtotal: Schema.Int,
  totals: Schema.Array(Total20260417),
  status: Schema.Literal("processing", "partial", "fulfilled", "removed")
})

const FulfillmentEvent20260417 = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal(
    "processing",
    "shipped",
    "in_transit",
    "out_for_delivery",
    "ready_for_pickup",
    "delivered",
    "failed_attempt",
    "returned_to_sender",
    "canceled",
    "undeliverable"
  ),
  occurred_at: Schema.String
})

const Fulfillment20260417 = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("shipping", "pickup", "digital"),
  status: Schema.Literal(
    "pending",
    "processing",
    "shipped",
    "in_transit",
    "out_for_delivery",
    "ready_for_pickup",
    "delivered",
    "failed",
    "canceled"
  ),
  line_items: Schema.Array(LineItemReference20260417),
  carrier: optional(Schema.String),
  tracking_number: optional(Schema.String),
  tracking_url: optional(Schema.String),
  events: Schema.Array(FulfillmentEvent20260417)
})

const Adjustment20260417 = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("refund", "credit", "return", "exchange", "price_adjustment", "cancellation", "dispute"),
  occurred_at: Schema.String,
  status: Schema.Literal("pending", "completed", "failed"),
  line_items: optional(Schema.Array(LineItemReference20260417)),
  amount: optional(Schema.Int),
  currency: optional(Schema.String.pipe(Schema.pattern(/^[a-z]{3}$/))),
  reason: optional(Schema.String)
})

const OrderStatus20260417 = Schema.Literal(
  "created",
  "confirmed",
  "manual_review",
  "processing",
  "shipped",
  "completed",
  "canceled"
)

export const OrderEvent20260417 = Schema.Struct({
  type: Schema.Literal("order_create", "order_update"),
  data: Schema.Struct({
    type: Schema.Literal("order"),
    id: Schema.String,
    checkout_session_id: Schema.String,
    permalink_url: Schema.String,
    status: OrderStatus20260417,
    line_items: Schema.Array(OrderLineItem20260417),
    fulfillments: Schema.Array(Fulfillment20260417),
    adjustments: Schema.Array(Adjustment20260417),
    totals: Schema.Array(Total20260417)
  })
}).annotations({ identifier: "OrderEvent_2026_04_17" })
export type OrderEvent20260417 = typeof OrderEvent20260417.Type
type Wire = OrderEvent20260417["data"]

const ORDER_STATUS: Record<OrderStatus, Wire["status"]> = {
  created: "created",
  manual_review: "manual_review",
  confirmed: "confirmed",
  canceled: "canceled",
  shipped: "shipped",
  fulfilled: "completed"
}

const ADJUSTMENT_TYPE: Record<AdjustmentType, Wire["adjustments"][number]["type"]> = {
  refund: "refund",
  credit: "credit",
  cancellation: "cancellation",
  dispute: "dispute"
}

const lineStatus = (current: number, fulfilled: number): Wire["line_items"][number]["status"] =>
  current === 0 ? "removed" : fulfilled >= current ? "fulfilled" : fulfilled > 0 ? "partial" : "processing"

const lineItem = (line: OrderLineItem, canceled: boolean): Wire["line_items"][number] => {
  const current = canceled ? 0 : line.quantity.ordered
  const fulfilled = line.quantity.shipped
  return {
    id: line.id,
    title: line.title,
    product_id: line.product_id,
    quantity: { ordered: line.quantity.ordered, current, fulfilled },
    unit_price: line.unit_price,
    subtotal: line.subtotal,
    totals: [
      { type: "subtotal", display_text: "Subtotal", amount: line.subtotal },
      { type: "tax", display_text: "Tax", amount: line.tax },
      { type: "total", display_text: "Total", amount: line.total }
    ],
    status: lineStatus(current, fulfilled)
  }
}

const adjustments = (order: Order, currency: string | undefined): Wire["adjustments"] =>
  order.adjustments.map((adjustment) => ({
    id: adjustment.id,
    type: ADJUSTMENT_TYPE[adjustment.type],
    occurred_at: adjustment.occurred_at,
    status: adjustment.status,
    ...(adjustment.type === "cancellation"
      ? { line_items: order.line_items.map((line) => ({ id: line.id, quantity: line.quantity.ordered })) }
      : {}),
    ...(adjustment.amount !== undefined
      ? { amount: adjustment.amount, ...(currency !== undefined ? { currency } : {}) }
      : {}),
    ...(adjustment.reason !== undefined ? { reason: adjustment.reason } : {})
  }))

/** The 2026-04-17 event of an order event (keys in the official order). */
export const toWire20260417 = ({ currency, data: order, type }: OrderEvent): OrderEvent20260417 => ({
  type,
  data: {
    type: "order",
    id: order.id,
    checkout_session_id: order.checkout_session_id,
    permalink_url: order.permalink_url,
    status: ORDER_STATUS[order.status],
    line_items: order.line_items.map((line) => lineItem(line, order.status === "canceled")),
    fulfillments: order.fulfillments.map((fulfillment) => ({
      id: fulfillment.id,
      type: fulfillment.type,
      status: fulfillment.status,
      line_items: fulfillment.line_items.map((ref) => ({ id: ref.id, quantity: ref.quantity })),
      ...(fulfillment.carrier !== undefined ? { carrier: fulfillment.carrier } : {}),
      ...(fulfillment.tracking_number !== undefined ? { tracking_number: fulfillment.tracking_number } : {}),
      ...(fulfillment.tracking_url !== undefined ? { tracking_url: fulfillment.tracking_url } : {}),
      events: fulfillment.events.map((event) => ({ id: event.id, type: event.type, occurred_at: event.occurred_at }))
    })),
    adjustments: adjustments(order, currency),
    totals: order.totals.map((total) => ({ type: total.type, display_text: total.display_text, amount: total.amount }))
  }
})

export const body20260417 = (event: OrderEvent): string => JSON.stringify(toWire20260417(event))

// Received: open enums and release-day aliases; required fields and JSON types checked.

const Id = boundedText(256)
const ReceivedCount = Schema.Int.pipe(Schema.nonNegative({ message: () => "must be a non-negative integer" }))
const ReceivedPositiveCount = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" })
)

const ReceivedTotal20260417 = Schema.Struct({
  type: OpenValue,
  display_text: Schema.String,
  amount: Schema.Int
}).annotations({ identifier: "ReceivedTotal_2026_04_17" })

const ReceivedLineItemReference = Schema.Struct({
  id: Id,
  quantity: ReceivedPositiveCount
}).annotations({ identifier: "ReceivedLineItemReference_2026_04_17" })

const ReceivedOrderLineItem = Schema.Struct({
  id: Id,
  title: Schema.String,
  product_id: optional(Schema.String),
  description: optional(Schema.String),
  image_url: optional(Schema.String),
  url: optional(Schema.String),
  quantity: Schema.Struct({
    ordered: ReceivedPositiveCount,
    current: optional(ReceivedCount),
    fulfilled: optional(ReceivedCount),
    /** The release-day name of `fulfilled`. */
    shipped: optional(ReceivedCount)
  }),
  unit_price: optional(Schema.Int),
  subtotal: optional(Schema.Int),
  totals: optional(Schema.Array(ReceivedTotal20260417)),
  status: optional(OpenValue)
}).annotations({ identifier: "ReceivedOrderLineItem_2026_04_17" })

const ReceivedFulfillmentEvent = Schema.Struct({
  id: Id,
  type: OpenValue,
  occurred_at: Schema.String,
  description: optional(Schema.String),
  location: optional(Schema.String)
}).annotations({ identifier: "ReceivedFulfillmentEvent_2026_04_17" })

const ReceivedFulfillment = Schema.Struct({
  id: Id,
  type: OpenValue,
  status: optional(OpenValue),
  line_items: optional(Schema.Array(ReceivedLineItemReference)),
  carrier: optional(Schema.String),
  tracking_number: optional(Schema.String),
  tracking_url: optional(Schema.String),
  destination: optional(JsonObject),
  estimated_delivery: optional(JsonObject),
  digital_delivery: optional(JsonObject),
  description: optional(Schema.String),
  events: optional(Schema.Array(ReceivedFulfillmentEvent))
}).annotations({ identifier: "ReceivedFulfillment_2026_04_17" })

const ReceivedAdjustment = Schema.Struct({
  id: Id,
  type: OpenValue,
  occurred_at: Schema.String,
  status: OpenValue,
  line_items: optional(Schema.Array(ReceivedLineItemReference)),
  amount: optional(Schema.Int),
  currency: optional(Schema.String),
  description: optional(Schema.String),
  reason: optional(Schema.String)
}).annotations({ identifier: "ReceivedAdjustment_2026_04_17" })

export const ReceivedOrderEvent20260417 = Schema.Struct({
  type: OpenValue,
  data: Schema.Struct({
    type: Schema.Literal("order"),
    id: Id,
    checkout_session_id: Id,
    permalink_url: boundedText(2048),
    status: OpenValue,
    order_number: optional(Schema.String),
    client_reference_id: optional(Schema.String),
    estimated_delivery: optional(JsonObject),
    confirmation: optional(JsonObject),
    support: optional(JsonObject),
    line_items: optional(Schema.Array(ReceivedOrderLineItem)),
    fulfillments: optional(Schema.Array(ReceivedFulfillment)),
    adjustments: optional(Schema.Array(ReceivedAdjustment)),
    totals: optional(Schema.Array(ReceivedTotal20260417))
  }).annotations({ identifier: "EventDataOrder_2026_04_17" })
}).annotations({ identifier: "WebhookEvent_2026_04_17" })
