/**
 * `CheckoutStore.createSessionReservingStock` in one statement: inserts the session and its
 * reservations and moves the stock counters only if every reservation fits in what is available to
 * the new session; otherwise it changes nothing. Returns whether it inserted.
 *
 * The stock rows are the only rows other sessions write too (every create of a product moves its
 * counter), so they are locked last, each for as short a time as the rest of the transaction: the
 * session and its reservations are inserted first, then each counter (in product-id order, the
 * order every locking step takes) is moved by one conditional update, only when the quantity is
 * within the row's free units (on hand minus the reserved counter). That fits, because what
 * `checkout_lock_stock` adds back (expired reservations not swept yet; a new session has none of
 * its own) only ever adds to them. When one is not within them, what was done is undone (the rows
 * stay locked) and the full availability of `checkout_lock_stock` decides, so the answer is always
 * the one availability computed in one place would give.
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
  version: 5,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_create_session(
    p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
    p_now timestamptz
  ) RETURNS boolean
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_product text;
    v_quantity integer;
    v_fits boolean;
  BEGIN
    INSERT INTO checkout_sessions (id, status, data, expires_at, created_at, updated_at, version)
    VALUES (p_id, p_status, p_data, p_expires_at, p_created_at, p_updated_at, 1);
    INSERT INTO reservations (session_id, product_id, quantity, expires_at)
    SELECT p_id, w.product_id, w.quantity, p_reserved_until
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
    FOR v_product, v_quantity IN
      SELECT w.product_id, w.quantity FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      ORDER BY w.product_id
    LOOP
      UPDATE stock SET reserved = reserved + v_quantity
      WHERE product_id = v_product AND on_hand - reserved >= v_quantity;
      IF NOT FOUND THEN
        UPDATE stock s SET reserved = s.reserved - w.quantity
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        WHERE s.product_id = w.product_id AND w.product_id < v_product;
        DELETE FROM reservations WHERE session_id = p_id;
        SELECT COALESCE(bool_and(w.quantity <= COALESCE(a.out_available, 0)), true)
        INTO v_fits
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        LEFT JOIN checkout_lock_stock(p_products, p_id, p_now) AS a ON a.out_product = w.product_id;
        IF NOT v_fits THEN
          DELETE FROM checkout_sessions WHERE id = p_id;
          RETURN false;
        END IF;
        INSERT INTO reservations (session_id, product_id, quantity, expires_at)
        SELECT p_id, w.product_id, w.quantity, p_reserved_until
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
        UPDATE stock s SET reserved = s.reserved + w.quantity
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        WHERE s.product_id = w.product_id;
        RETURN true;
      END IF;
    END LOOP;
    RETURN true;
  END
  $fn$
`
}
