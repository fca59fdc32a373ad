/**
 * The JSON text the SQL stores keep for orders and their events, and the arguments of
 * `order_save_with_event` (migration 0011) for one order change: the SQL of writing an order with
 * its event lives in that function, called by `SqlOrderStore` and by the completion of a paid
 * checkout (`SqlCheckoutStore`), and this is how both pass it what to write.
 */
import type { SqlClient } from "@effect/sql"
import { Schema } from "effect"
import { Order } from "./order-schemas.ts"
import { OutgoingWebhookEvent } from "../webhooks/webhook.ts"
import type { OrderChange } from "./order-store.ts"

const encodeEvent = Schema.encodeSync(OutgoingWebhookEvent)
const encodeOrder = Schema.encodeSync(Order)

/** An order as stored in `orders.data`. */
export const orderJson = (order: Order): string => JSON.stringify(encodeOrder(order))
/** An event as stored in `webhook_outbox.payload` (and sent). */
export const eventJson = (payload: OutgoingWebhookEvent): string => JSON.stringify(encodeEvent(payload))

const iso = (epochMillis: number): string => new Date(epochMillis).toISOString()

/**
 * `p_order_id, p_session, p_order_data, p_order_created_at, p_event_id, p_event_type,
 * p_event_payload, p_now`, in that order.
 */
export const orderChangeArguments = (sql: SqlClient.SqlClient, { event, stored }: OrderChange) =>
  sql`${stored.order.id}, ${stored.sessionId}, ${orderJson(stored.order)}::jsonb,
      ${iso(stored.createdAt)}::timestamptz, ${event.id}, ${event.payload.type},
      ${eventJson(event.payload)}::jsonb, ${iso(event.now)}::timestamptz`
