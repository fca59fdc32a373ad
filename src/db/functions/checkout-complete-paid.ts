/**
 * `CheckoutStore.completePaidCheckout` in one statement, only while the session is at `p_version` and
 * attempt `p_sequence` is pending (else NULL, nothing written): writes the attempt, session, order and
 * event, coupons and stock, locking session, coupons, stock in that order (`docs/concurrency.md#lock-order`).
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutCompletePaid: SqlFunction = {
  name: "checkout_complete_paid",
  version: 4,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_complete_paid(
    p_session text, p_version bigint, p_status text, p_data json, p_internal json, p_expires_at timestamptz,
    p_updated_at timestamptz, p_sequence integer, p_charge_id text, p_paid_at timestamptz,
    -- then the arguments of order_save_with_event
    p_order_id text, p_order_session text, p_order_data json, p_order_created_at timestamptz,
    p_event_id text, p_event_type text, p_event_payload json, p_now timestamptz
  ) RETURNS integer
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_version bigint;
    v_coupons text[];
    v_sequence integer;
  BEGIN
    SELECT s.version INTO v_version FROM checkout_sessions s WHERE s.id = p_session FOR UPDATE;
    IF v_version IS DISTINCT FROM p_version THEN
      RETURN NULL;
    END IF;
    UPDATE payment_attempts a SET state = 'succeeded', charge_id = p_charge_id, updated_at = p_paid_at
    WHERE a.session_id = p_session AND a.sequence = p_sequence AND a.state = 'pending';
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
    UPDATE checkout_sessions
    SET status = p_status, data = p_data, internal = p_internal, expires_at = p_expires_at, updated_at = p_updated_at,
        version = version + 1
    WHERE id = p_session;
    v_sequence := order_save_with_event(p_order_id, p_order_session, p_order_data, p_order_created_at,
                                        p_event_id, p_event_type, p_event_payload, p_now);
    -- The rows every checkout shares last, so they stay locked the shortest time.
    SELECT array_agg(h.coupon_id ORDER BY h.coupon_id) INTO v_coupons FROM coupon_holds h WHERE h.session_id = p_session;
    IF v_coupons IS NOT NULL THEN
      PERFORM 1 FROM coupons c WHERE c.id = ANY (v_coupons) ORDER BY c.id FOR UPDATE;
      UPDATE coupons c SET times_redeemed = c.times_redeemed + 1 WHERE c.id = ANY (v_coupons);
      DELETE FROM coupon_holds h WHERE h.session_id = p_session;
    END IF;
    PERFORM checkout_remove_reservations(p_session, true);
    RETURN v_sequence;
  END
  $fn$
`
}
