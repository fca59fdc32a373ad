/**
 * `CheckoutStore.createSessionReservingStock` in one statement: locks the stock rows of the
 * session's reservations (product-id order, like every stock lock), computes what is available to
 * the new session exactly as `checkout_lock_stock` does (the add-back is a statement of its own, so
 * it sees what a transaction it waited for committed), and only when every reservation fits
 * inserts the session and its reservations and moves the counters; otherwise it changes nothing.
 * Returns whether it inserted. The add-back reads the session's own rows and other sessions'
 * expired ones as two index range scans (primary key, `reservations_product_expires_at`).
 *
 * "Fits" is the domain's rule (`reservationsFit` of `src/checkout/inventory.ts`: each quantity at
 * most what is available, a product without a stock row having none), decided here so that the
 * check and the write are one atomic step without locks held between round trips;
 * `test/checkout/stock-fits.property.test.ts` requires the same answers as the domain's.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutCreateSession: SqlFunction = {
  name: "checkout_create_session",
  version: 2,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_create_session(
    p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
    p_now timestamptz
  ) RETURNS boolean
  LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  DECLARE
    v_products text[];
    v_free integer[];
    v_fits boolean;
  BEGIN
    SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
    INTO v_products, v_free
    FROM (
      SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
      WHERE s.product_id = ANY (p_products)
      ORDER BY s.product_id
      FOR UPDATE
    ) l;
    SELECT COALESCE(bool_and(w.quantity <= COALESCE(l.free + COALESCE(b.back, 0), 0)), true)
    INTO v_fits
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    LEFT JOIN unnest(v_products, v_free) AS l (product_id, free) ON l.product_id = w.product_id
    LEFT JOIN (
      SELECT x.product_id, SUM(x.quantity) AS back FROM (
        SELECT r.product_id, r.quantity FROM reservations r
        WHERE r.session_id = p_id AND r.product_id = ANY (v_products)
        UNION ALL
        SELECT r.product_id, r.quantity FROM reservations r
        WHERE r.product_id = ANY (v_products) AND r.expires_at <= p_now AND r.session_id <> p_id
      ) x
      GROUP BY x.product_id
    ) b ON b.product_id = w.product_id;
    IF NOT v_fits THEN
      RETURN false;
    END IF;
    INSERT INTO checkout_sessions (id, status, data, expires_at, created_at, updated_at, version)
    VALUES (p_id, p_status, p_data, p_expires_at, p_created_at, p_updated_at, 1);
    IF cardinality(p_products) > 0 THEN
      UPDATE stock s SET reserved = s.reserved + w.quantity
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      WHERE s.product_id = w.product_id;
      INSERT INTO reservations (session_id, product_id, quantity, expires_at)
      SELECT p_id, w.product_id, w.quantity, p_reserved_until
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
    END IF;
    RETURN true;
  END
  $fn$
`
}
