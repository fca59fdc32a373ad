/**
 * `CheckoutStore.lockStock`: locks the stock rows of p_products (product-id order) and returns the
 * units available to p_session at p_now: on hand minus the reserved counter, plus what the counter
 * holds that is available to p_session anyway — its own reservations and other sessions'
 * reservations expired but not swept yet. The add-back runs after the locks, as two index range
 * scans (primary key, `reservations_product_expires_at`).
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutLockStock: SqlFunction = {
  name: "checkout_lock_stock",
  version: 2,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_lock_stock(p_products text[], p_session text, p_now timestamptz)
  RETURNS TABLE (out_product text, out_available integer)
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_products text[];
    v_free integer[];
  BEGIN
    SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
    INTO v_products, v_free
    FROM (
      SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
      WHERE s.product_id = ANY (p_products)
      ORDER BY s.product_id
      FOR UPDATE
    ) l;
    RETURN QUERY
      SELECT l.product_id, (l.free + COALESCE(b.back, 0))::integer
      FROM unnest(v_products, v_free) AS l (product_id, free)
      LEFT JOIN (
        SELECT x.product_id, SUM(x.quantity) AS back FROM (
          SELECT r.product_id, r.quantity FROM reservations r
          WHERE r.session_id = p_session AND r.product_id = ANY (v_products)
          UNION ALL
          SELECT r.product_id, r.quantity FROM reservations r
          WHERE r.product_id = ANY (v_products) AND r.expires_at <= p_now AND r.session_id <> p_session
        ) x
        GROUP BY x.product_id
      ) b ON b.product_id = l.product_id;
  END
  $fn$
`
}
