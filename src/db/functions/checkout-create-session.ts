/**
 * `CheckoutStore.createSessionReservingStock` in one statement: locks the stock rows of the
 * session's reservations (product-id order) and decides whether every reservation fits in what is
 * available to the new session; only then inserts the session and its reservations and moves the
 * counters; otherwise it changes nothing. Returns whether it inserted.
 *
 * Fast path: a quantity within the stock row's free units (on hand minus the reserved counter)
 * fits, because what `checkout_lock_stock` adds back (expired reservations not swept yet; a new
 * session has none of its own) only ever adds to them. Only when something does not fit that way
 * is the full availability of `checkout_lock_stock` read (the rows are locked already), so the
 * answer is always the one availability computed in one place would give.
 *
 * "Fits" is the domain's rule (`reservationsFit` of `src/checkout/inventory.ts`: each quantity at
 * most what is available, a product without a stock row having none), decided here so that the
 * check and the write are one atomic step without locks held between round trips;
 * `test/checkout/stock-fits.property.test.ts` requires the same answers as the domain's. Plans
 * are cached generic ones: the statements' shape never changes, and planning anew per call (the
 * default for `= ANY` of a parameter array) costs more than the statements themselves.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutCreateSession: SqlFunction = {
  name: "checkout_create_session",
  version: 4,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_create_session(
    p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
    p_now timestamptz
  ) RETURNS boolean
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_fits boolean;
  BEGIN
    SELECT COALESCE(bool_and(w.quantity <= COALESCE(l.free, 0)), true)
    INTO v_fits
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    LEFT JOIN (
      SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
      WHERE s.product_id = ANY (p_products)
      ORDER BY s.product_id
      FOR UPDATE
    ) l ON l.product_id = w.product_id;
    IF NOT v_fits THEN
      SELECT COALESCE(bool_and(w.quantity <= COALESCE(a.out_available, 0)), true)
      INTO v_fits
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      LEFT JOIN checkout_lock_stock(p_products, p_id, p_now) AS a ON a.out_product = w.product_id;
      IF NOT v_fits THEN
        RETURN false;
      END IF;
    END IF;
    WITH wanted AS (
      SELECT w.product_id, w.quantity FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    ), session AS (
      INSERT INTO checkout_sessions (id, status, data, expires_at, created_at, updated_at, version)
      VALUES (p_id, p_status, p_data, p_expires_at, p_created_at, p_updated_at, 1)
    ), counters AS (
      UPDATE stock s SET reserved = s.reserved + wanted.quantity
      FROM wanted WHERE s.product_id = wanted.product_id
    )
    INSERT INTO reservations (session_id, product_id, quantity, expires_at)
    SELECT p_id, wanted.product_id, wanted.quantity, p_reserved_until FROM wanted;
    RETURN true;
  END
  $fn$
`
}
