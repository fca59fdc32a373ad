/**
 * Order events in 2025-09-29: the interface document's format (CONTRACT §8), which wins over the official
 * webhook file; `data` is the full order as the order routes show it. The receiver's reading also serves
 * 2026-01-30, whose official file is the same. Details: `docs/order-events.md`.
 */
import { Schema } from "effect"
import { Amount, optional } from "../../../shared/schema-helpers.ts"
import { type OrderEvent, OrderEventType } from "../../model/order-event.ts"
import { Order } from "../../model/order.ts"
import { boundedText, JsonObject } from "./received-values.ts"

/**
 * The interface document's adjustment: no dispute (a dispute is left out: it moves no refund, and
 * its outcome is the order's `refunds` only once the merchant refunds), no provider references.
 */
const Adjustment20250929 = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("refund", "credit", "cancellation"),
  status: Schema.Literal("completed"),
  occurred_at: Schema.String,
  amount: optional(Amount)
}).annotations({ identifier: "Adjustment_2025_09_29" })
type Adjustment20250929 = typeof Adjustment20250929.Type

const Order20250929 = Schema.Struct({
  ...Order.fields,
  adjustments: Schema.Array(Adjustment20250929)
}).annotations({ identifier: "FullOrder_2025_09_29" })

export const OrderEvent20250929 = Schema.Struct({
  type: OrderEventType,
  data: Order20250929
}).annotations({ identifier: "OrderEvent_2025_09_29" })

const encode = Schema.encodeSync(OrderEvent20250929)

const adjustments20250929 = (order: Order): ReadonlyArray<Adjustment20250929> =>
  order.adjustments.flatMap((adjustment) =>
    adjustment.type === "dispute" || adjustment.status !== "completed" ? [] : [{
      id: adjustment.id,
      type: adjustment.type,
      status: adjustment.status,
      occurred_at: adjustment.occurred_at,
      ...(adjustment.amount !== undefined ? { amount: adjustment.amount } : {})
    }]
  )

/** The body: the event in schema key order. */
export const body20250929 = (event: OrderEvent): string =>
  JSON.stringify(encode({ type: event.type, data: { ...event.data, adjustments: adjustments20250929(event.data) } }))

export const WebhookRefund = Schema.Struct({
  type: Schema.Literal("store_credit", "original_payment"),
  amount: Amount
}).annotations({ identifier: "WebhookRefund" })

export const ReceivedTotal = Schema.Struct({
  type: boundedText(64),
  display_text: boundedText(256),
  amount: Schema.Int
}).annotations({ identifier: "ReceivedTotal" })

export const EventDataOrder = Schema.Struct({
  type: Schema.Literal("order"),
  id: optional(boundedText(256)),
  checkout_session_id: boundedText(256),
  permalink_url: boundedText(2048),
  status: boundedText(64),
  refunds: Schema.Array(WebhookRefund),
  line_items: optional(Schema.Array(JsonObject)),
  fulfillments: optional(Schema.Array(JsonObject)),
  adjustments: optional(Schema.Array(JsonObject)),
  totals: optional(Schema.Array(ReceivedTotal))
}).annotations({ identifier: "EventDataOrder" })

/** The event of 2025-09-29 and 2026-01-30 as the receiver reads it. */
export const ReceivedOrderEvent20250929 = Schema.Struct({
  type: OrderEventType,
  data: EventDataOrder
}).annotations({ identifier: "WebhookEvent" })
