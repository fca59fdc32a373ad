/** The JSON text of orders and their events: as answered, as tagged, and as stored. */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import { OrderEvent } from "./order-event.ts"
import { Order } from "./order.ts"

const encodeOrder = Schema.encodeSync(Order)

/** In the schema's key order, whatever the value's (orders stored as jsonb come back reordered): answers, tags. */
export const orderJson = (order: Order): string => JSON.stringify(encodeOrder(order))

/** As stored in `orders.data`: the schemas have no transformations, so the value is its encoded form as is. */
export const storedOrderJson = (order: Order): string => {
  const encoded: typeof Order.Encoded = order
  return JSON.stringify(encoded)
}

/** As stored in `webhook_outbox.payload`, around the order's stored text (which the order row shares). */
export const storedEventJson = (payload: OrderEvent, orderText: string = storedOrderJson(payload.data)): string => {
  const encoded: typeof OrderEvent.Encoded = payload
  const currency = encoded.currency === undefined ? "" : `,"currency":${JSON.stringify(encoded.currency)}`
  return `{"type":${JSON.stringify(encoded.type)},"data":${orderText}${currency}}`
}

const EVENT_TYPES: ReadonlySet<unknown> = new Set(OrderEvent.fields.type.literals)

/** A structural check, not a decode: only the stores write payloads, from a typed `OrderEvent`. */
export const isStoredOrderEvent = (value: unknown): value is OrderEvent => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const { data, type } = value as { readonly type?: unknown; readonly data?: unknown }
  return EVENT_TYPES.has(type) && typeof data === "object" && data !== null &&
    (data as { readonly type?: unknown }).type === "order" && typeof (data as { readonly id?: unknown }).id === "string"
}

/**
 * A short tag of an order's exact content: an action from a page applies only while the order still has
 * the page's tag (a second click or someone else's change is refused, not applied twice or blindly).
 */
export const orderTag = (order: Order): string =>
  createHash("sha256").update(orderJson(order), "utf8").digest("base64url").slice(0, 22)
