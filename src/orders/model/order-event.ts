/**
 * An order event as the outbox keeps it: what happened (`order_create` | `order_update`), the full
 * order after the change and the currency the order is priced in. It knows no ACP version: the
 * body posted for it is made from it when it is sent, in the version the receiver is configured
 * for (`order-event-wire/`), so a change of `WEBHOOK_API_VERSION` applies to queued events too.
 */
import { Schema } from "effect"
import { CurrencyCode, optional } from "../../shared/schema-helpers.ts"
import { Order } from "./order.ts"

export const OrderEventType = Schema.Literal("order_create", "order_update")
export type OrderEventType = typeof OrderEventType.Type

export const OrderEvent = Schema.Struct({
  type: OrderEventType,
  data: Order,
  /** Absent on events queued before the currency was recorded; versions that carry it then omit it. */
  currency: optional(CurrencyCode)
}).annotations({ identifier: "OrderEvent" })
export type OrderEvent = typeof OrderEvent.Type

export const makeOrderEvent = (type: OrderEventType, order: Order, currency?: string): OrderEvent => ({
  type,
  data: order,
  ...(currency !== undefined ? { currency } : {})
})
