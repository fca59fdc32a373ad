/** The JSON text an order and its events are stored as (and an event is sent as). */
import { Schema } from "effect"
import { OutgoingWebhookEvent } from "../webhooks/webhook.ts"
import { Order } from "./order-schemas.ts"

const encodeEvent = Schema.encodeSync(OutgoingWebhookEvent)
const encodeOrder = Schema.encodeSync(Order)

/** An order as stored in `orders.data`. */
export const orderJson = (order: Order): string => JSON.stringify(encodeOrder(order))

/** An event as stored in `webhook_outbox.payload` (and sent). */
export const eventJson = (payload: OutgoingWebhookEvent): string => JSON.stringify(encodeEvent(payload))
