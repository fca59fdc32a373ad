/**
 * Writes an order row (new, or its new state) and queues its webhook event, next in the order's
 * sequence: the SQL of every order change (`OrderStore.saveOrderWithEvent`, `checkout_complete_paid`).
 */
import type { SqlClient } from "@effect/sql"
import type { SqlFunction } from "./sql-function.ts"

export const orderSaveWithEvent: SqlFunction = {
  name: "order_save_with_event",
  version: 3,
  definition: `
  CREATE OR REPLACE FUNCTION order_save_with_event(
    p_order_id text, p_session text, p_order_data json, p_order_created_at timestamptz,
    p_event_id text, p_event_type text, p_event_payload json, p_now timestamptz
  ) RETURNS integer
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_sequence integer;
  BEGIN
    INSERT INTO orders (id, checkout_session_id, data, created_at)
    VALUES (p_order_id, p_session, p_order_data, p_order_created_at)
    ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data;
    INSERT INTO webhook_outbox (id, order_id, sequence, type, payload, state, attempts, next_attempt_at, created_at)
    VALUES (p_event_id, p_order_id,
            COALESCE((SELECT MAX(o.sequence) FROM webhook_outbox o WHERE o.order_id = p_order_id), 0) + 1,
            p_event_type, p_event_payload, 'pending', 0, p_now, p_now)
    RETURNING sequence INTO v_sequence;
    RETURN v_sequence;
  END
  $fn$
`
}

/** What `order_save_with_event` writes, encoded: JSON as text, times as ISO 8601 strings. */
export interface OrderSaveArguments {
  readonly orderId: string
  readonly sessionId: string
  readonly orderJson: string
  readonly orderCreatedAt: string
  readonly eventId: string
  readonly eventType: string
  readonly eventJson: string
  readonly eventAt: string
}

export const orderSaveArguments = (sql: SqlClient.SqlClient, a: OrderSaveArguments) =>
  sql`${a.orderId}, ${a.sessionId}, ${a.orderJson}::json, ${a.orderCreatedAt}::timestamptz, ${a.eventId},
      ${a.eventType}, ${a.eventJson}::json, ${a.eventAt}::timestamptz`
