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

export const OrderEvent20250929 = Schema.Struct({
  type: OrderEventType,
  data: Order
}).annotations({ identifier: "OrderEvent_2025_09_29" })

const encode = Schema.encodeSync(OrderEvent20250929)

/** The body: the event in schema key order. */
export const body20250929 = (event: OrderEvent): string =>
  JSON.stringify(encode({ type: event.type, data: event.data }))

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
