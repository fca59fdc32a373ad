/**
 * An order event as the outbox keeps it, in no ACP version: its body is made when it is sent, in
 * `WEBHOOK_API_VERSION` (`../wire/acp/`), so a change of that setting applies to queued events too.
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
