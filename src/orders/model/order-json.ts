/** The JSON text of orders and their events: as answered, as tagged, and as stored. */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import { OrderEvent } from "./order-event.ts"
import { Order } from "./order.ts"

const encodeOrder = Schema.encodeSync(Order)

/**
 * An order in the schema's canonical form: its properties in the schema's order, whatever order the
 * value was built or read back in (orders stored as jsonb, before migration 0021, come back in its
 * key order). Answers and tags use it.
 */
export const orderJson = (order: Order): string => JSON.stringify(encodeOrder(order))

/**
 * An order as stored in `orders.data`. The order schemas have no transformations (the encoded
 * form is the type, checked here by the compiler), so the typed value is its encoded form as is:
 * no pass of the schema over the whole order on every write. Key order is the value's own: answers
 * and tags use `orderJson`, which does not depend on it.
 */
export const storedOrderJson = (order: Order): string => {
  const encoded: typeof Order.Encoded = order
  return JSON.stringify(encoded)
}

/**
 * An event as stored in `webhook_outbox.payload` (the body sent is made from it:
 * `order-event-wire/`), around the order's stored text (`storedOrderJson`, which the order row
 * shares) instead of serializing the order a second time.
 */
export const storedEventJson = (payload: OrderEvent, orderText: string = storedOrderJson(payload.data)): string => {
  const encoded: typeof OrderEvent.Encoded = payload
  const currency = encoded.currency === undefined ? "" : `,"currency":${JSON.stringify(encoded.currency)}`
  return `{"type":${JSON.stringify(encoded.type)},"data":${orderText}${currency}}`
}

const EVENT_TYPES: ReadonlySet<unknown> = new Set(OrderEvent.fields.type.literals)

/**
 * A stored event read back. The payload is written only by the stores, from an already typed
 * `OrderEvent` (`storedEventJson`), so a full schema decode on every claim would only re-check
 * what was checked before writing: a structural check that it is what they write (a known type
 * and an order with a string id) is enough, as for stored sessions.
 */
export const isStoredOrderEvent = (value: unknown): value is OrderEvent => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const { data, type } = value as { readonly type?: unknown; readonly data?: unknown }
  return EVENT_TYPES.has(type) && typeof data === "object" && data !== null &&
    (data as { readonly type?: unknown }).type === "order" && typeof (data as { readonly id?: unknown }).id === "string"
}

/**
 * A short tag of an order's exact content: a page shows the order as of this tag, and an action
 * made from that page applies only while the order still has it (a second click, or a change
 * made meanwhile by someone else, is refused instead of applied twice or blindly). Made from the
 * canonical form, so an order read back from storage has the tag it had when it was shown.
 */
export const orderTag = (order: Order): string =>
  createHash("sha256").update(orderJson(order), "utf8").digest("base64url").slice(0, 22)
