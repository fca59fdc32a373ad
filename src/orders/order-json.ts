/** The JSON text an order and its events are stored as. */
import { Schema } from "effect"
import { OrderEvent } from "./order-event.ts"
import { Order } from "./order-schemas.ts"

const encodeEvent = Schema.encodeSync(OrderEvent)
const encodeOrder = Schema.encodeSync(Order)

/** An order as stored in `orders.data`. */
export const orderJson = (order: Order): string => JSON.stringify(encodeOrder(order))

/** An event as stored in `webhook_outbox.payload` (the body sent is made from it: `order-event-wire/`). */
export const eventJson = (payload: OrderEvent): string => JSON.stringify(encodeEvent(payload))
