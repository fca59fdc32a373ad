/**
 * `CheckoutStore.setReservations`: makes `p_session`'s reservations `p_products` × `p_quantities` until
 * `p_expires_at`, writing only the difference and moving the stock counters by it.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutSetReservations: SqlFunction = {
  name: "checkout_set_reservations",
  version: 2,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_set_reservations(
    p_session text, p_products text[], p_quantities integer[], p_expires_at timestamptz
  ) RETURNS void
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_products text[];
    v_deltas integer[];
  BEGIN
    SELECT array_agg(d.product_id ORDER BY d.product_id), array_agg(d.delta ORDER BY d.product_id)
    INTO v_products, v_deltas
    FROM (
      SELECT COALESCE(w.product_id, o.product_id) AS product_id,
             COALESCE(w.quantity, 0) - COALESCE(o.quantity, 0) AS delta
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      FULL JOIN (SELECT r.product_id, r.quantity FROM reservations r WHERE r.session_id = p_session) o
        ON o.product_id = w.product_id
    ) d
    WHERE d.delta <> 0;
    IF v_products IS NOT NULL THEN
      PERFORM 1 FROM stock s WHERE s.product_id = ANY (v_products) ORDER BY s.product_id FOR UPDATE;
      UPDATE stock s SET reserved = s.reserved + d.delta
      FROM unnest(v_products, v_deltas) AS d (product_id, delta)
      WHERE s.product_id = d.product_id;
      DELETE FROM reservations r WHERE r.session_id = p_session AND r.product_id <> ALL (p_products);
      INSERT INTO reservations (session_id, product_id, quantity, expires_at)
      SELECT p_session, w.product_id, w.quantity, p_expires_at
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      WHERE NOT EXISTS (SELECT FROM reservations r WHERE r.session_id = p_session AND r.product_id = w.product_id);
    END IF;
    UPDATE reservations r SET quantity = w.quantity, expires_at = p_expires_at
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    WHERE r.session_id = p_session AND r.product_id = w.product_id
      AND (r.quantity <> w.quantity OR r.expires_at <> p_expires_at);
  END
  $fn$
`
}
