/**
 * `CheckoutStore.createSessionReservingStock` in one statement: locks the stock rows of the
 * session's reservations and reads what is available to the new session with `checkout_lock_stock`
 * (so the availability is computed in one place), and only when every reservation fits inserts the
 * session and its reservations and moves the counters; otherwise it changes nothing. Returns
 * whether it inserted.
 *
 * "Fits" is the domain's rule (`reservationsFit` of `src/checkout/inventory.ts`: each quantity at
 * most what is available, a product without a stock row having none), decided here so that the
 * check and the write are one atomic step without locks held between round trips;
 * `test/checkout/stock-fits.property.test.ts` requires the same answers as the domain's.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutCreateSession: SqlFunction = {
  name: "checkout_create_session",
  version: 3,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_create_session(
    p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
    p_now timestamptz
  ) RETURNS boolean
  LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  DECLARE
    v_fits boolean;
  BEGIN
    SELECT COALESCE(bool_and(w.quantity <= COALESCE(a.out_available, 0)), true)
    INTO v_fits
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    LEFT JOIN checkout_lock_stock(p_products, p_id, p_now) AS a ON a.out_product = w.product_id;
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
