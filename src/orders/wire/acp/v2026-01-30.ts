/**
 * Order events in 2026-01-30: the official format, which allows no other field, so `data` has no order
 * `id`, lines, fulfillments, adjustments or totals. Received as 2025-09-29 (`v2025-09-29.ts`).
 */
import { Schema } from "effect"
import { type OrderEvent, OrderEventType } from "../../model/order-event.ts"

const Refund20260130 = Schema.Struct({
  type: Schema.Literal("store_credit", "original_payment"),
  amount: Schema.Int
}).annotations({ identifier: "Refund_2026_01_30" })

const EventDataOrder20260130 = Schema.Struct({
  type: Schema.Literal("order"),
  checkout_session_id: Schema.String,
  permalink_url: Schema.String,
  status: Schema.Literal("created", "manual_review", "confirmed", "canceled", "shipped", "fulfilled"),
  refunds: Schema.Array(Refund20260130)
}).annotations({ identifier: "EventDataOrder_2026_01_30" })

export const OrderEvent20260130 = Schema.Struct({
  type: OrderEventType,
  data: EventDataOrder20260130
}).annotations({ identifier: "OrderEvent_2026_01_30" })
export type OrderEvent20260130 = typeof OrderEvent20260130.Type

/** The 2026-01-30 event of an order event (keys in the official order). */
export const toWire20260130 = ({ data: order, type }: OrderEvent): OrderEvent20260130 => ({
  type,
  data: {
    type: "order",
    checkout_session_id: order.checkout_session_id,
    permalink_url: order.permalink_url,
    status: order.status,
    refunds: order.refunds.map((refund) => ({ type: refund.type, amount: refund.amount }))
  }
})

export const body20260130 = (event: OrderEvent): string => JSON.stringify(toWire20260130(event))
