/**
 * Order events in 2025-09-29: the interface document's format (CONTRACT §8), which wins over the
 * official 2025-09-29 webhook file for this version.
 *
 * - Sent: `{type, data}` with `data` the full order exactly as the merchant's order routes show it
 *   (`id`, `refunds`, `line_items` with `quantity {ordered, shipped}`, `fulfillments`,
 *   `adjustments`, `totals`); the official `data` is the subset `{type, checkout_session_id,
 *   permalink_url, status, refunds}` without `id`.
 * - Received (this reading also serves 2026-01-30, whose webhook file is the same as 2025-09-29's):
 *   event `type` is `order_create` | `order_update`; `data.type` `order`, `checkout_session_id`,
 *   `permalink_url`, `status` and `refunds` are required, `id` is optional; any `status` string is
 *   kept; the optional arrays are kept as sent, their elements checked loosely (objects; totals
 *   `{type, display_text, amount}`); unknown fields are ignored (and kept with the event).
 */
import { Schema } from "effect"
import { Amount, optional } from "../../../shared/schema-helpers.ts"
import { type OrderEvent, OrderEventType } from "../../model/order-event.ts"
import { Order } from "../../model/order.ts"
import { boundedText, JsonObject } from "./received-values.ts"

/** The event as sent in 2025-09-29. */
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

/** EventDataOrder of 2025-09-29 and 2026-01-30 as the receiver reads it. */
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
