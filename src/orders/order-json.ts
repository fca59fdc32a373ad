/** The JSON text an order and its events are stored as. */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import { OrderEvent } from "./order-event.ts"
import { Order } from "./order-schemas.ts"

const encodeEvent = Schema.encodeSync(OrderEvent)
const encodeOrder = Schema.encodeSync(Order)

/** An order as stored in `orders.data`. */
export const orderJson = (order: Order): string => JSON.stringify(encodeOrder(order))

/** An event as stored in `webhook_outbox.payload` (the body sent is made from it: `order-event-wire/`). */
export const eventJson = (payload: OrderEvent): string => JSON.stringify(encodeEvent(payload))

/**
 * A short tag of an order's exact content: a page shows the order as of this tag, and an action
 * made from that page applies only while the order still has it (a second click, or a change
 * made meanwhile by someone else, is refused instead of applied twice or blindly).
 */
export const orderTag = (order: Order): string =>
  createHash("sha256").update(orderJson(order), "utf8").digest("base64url").slice(0, 22)
