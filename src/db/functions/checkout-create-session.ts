/**
 * `CheckoutStore.createSessionReservingStock` in one statement: inserts the session and its
 * reservations only if every reservation fits in what is available to the new session; otherwise
 * it changes nothing. Returns whether it inserted.
 *
 * Stock is the only thing other creates write too, so a create's units come from one of the
 * product's shards (`stock_shards`, migration 0019): the shard its session id falls in
 * (`stock_shard_of`). Creates of one product in demand then write different rows, and the stock
 * row is written only when a shard lacks the units and borrows them, with up to `STOCK_LEND` more
 * (only units free at the stock row are lent, so a shard's units are free ones). Shard rows are
 * never created here (a product's are created all at once with its stock row, or by
 * `checkout_lock_stock`). The session and its reservations are inserted first; then the shards,
 * in product-id order, each taken by one conditional update (or locked when it lacks); then the
 * stock rows of the lacking ones, in product-id order. Every step that locks both takes shards
 * before stock rows, so two never deadlock.
 *
 * When a stock row lacks too (or the shards do not exist yet), all of that is rolled back, its
 * locks included (the inner block is a subtransaction), and the exact availability decides:
 * `checkout_lock_stock` (every shard of the products, then their stock rows, the shards' units
 * taken back) and the units reserved at the stock row — so the answer is always the one
 * availability computed in one place would give, and a shard's units are never missed.
 *
 * "Fits" is the domain's rule (`reservationsFit` of `src/checkout/session/inventory.ts`: each quantity at
 * most what is available, a product without a stock row having none), decided here so that the
 * check and the write are one atomic step without locks held between round trips;
 * `test/checkout/stock-fits.property.test.ts` requires the same answers as the domain's. Plans
 * are cached generic ones: the statements' shape never changes, and planning anew per call (the
 * default for `= ANY` of a parameter array) costs more than the statements themselves.
 */
import type { SqlFunction } from "./sql-function.ts"
import { STOCK_LEND } from "./stock-shards.ts"

export const checkoutCreateSession: SqlFunction = {
  name: "checkout_create_session",
  version: 7,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_create_session(
    p_id text, p_status text, p_data json, p_internal json, p_expires_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
    p_now timestamptz
  ) RETURNS boolean
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_shard smallint := stock_shard_of(p_id);
    v_product text;
    v_quantity integer;
    v_lacking text[] := '{}';
    v_lacking_quantities integer[] := '{}';
    v_free integer;
    v_lend integer;
    v_fits boolean;
  BEGIN
    BEGIN
      INSERT INTO checkout_sessions (id, status, data, internal, expires_at, created_at, updated_at, version)
      VALUES (p_id, p_status, p_data, p_internal, p_expires_at, p_created_at, p_updated_at, 1);
      INSERT INTO reservations (session_id, product_id, quantity, expires_at)
      SELECT p_id, w.product_id, w.quantity, p_reserved_until
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
      FOR v_product, v_quantity IN
        SELECT w.product_id, w.quantity FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        ORDER BY w.product_id
      LOOP
        UPDATE stock_shards SET free = free - v_quantity
        WHERE product_id = v_product AND shard = v_shard AND free >= v_quantity;
        IF NOT FOUND THEN
          PERFORM 1 FROM stock_shards WHERE product_id = v_product AND shard = v_shard FOR UPDATE;
          IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'AC001';
          END IF;
          v_lacking := v_lacking || v_product;
          v_lacking_quantities := v_lacking_quantities || v_quantity;
        END IF;
      END LOOP;
      FOR i IN 1 .. COALESCE(array_length(v_lacking, 1), 0) LOOP
        SELECT s.on_hand - s.reserved INTO v_free FROM stock s WHERE s.product_id = v_lacking[i] FOR UPDATE;
        IF v_free IS NULL OR v_free < v_lacking_quantities[i] THEN
          RAISE EXCEPTION USING ERRCODE = 'AC001';
        END IF;
        v_lend := LEAST(v_free - v_lacking_quantities[i], ${STOCK_LEND});
        UPDATE stock SET reserved = reserved + v_lacking_quantities[i] + v_lend WHERE product_id = v_lacking[i];
        IF v_lend > 0 THEN
          UPDATE stock_shards SET free = free + v_lend WHERE product_id = v_lacking[i] AND shard = v_shard;
        END IF;
      END LOOP;
      RETURN true;
    EXCEPTION WHEN SQLSTATE 'AC001' THEN
      NULL;
    END;
    SELECT COALESCE(bool_and(w.quantity <= COALESCE(a.out_available, 0)), true)
    INTO v_fits
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    LEFT JOIN checkout_lock_stock(p_products, p_id, p_now) AS a ON a.out_product = w.product_id;
    IF NOT v_fits THEN
      RETURN false;
    END IF;
    INSERT INTO checkout_sessions (id, status, data, internal, expires_at, created_at, updated_at, version)
    VALUES (p_id, p_status, p_data, p_internal, p_expires_at, p_created_at, p_updated_at, 1);
    INSERT INTO reservations (session_id, product_id, quantity, expires_at)
    SELECT p_id, w.product_id, w.quantity, p_reserved_until
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
    UPDATE stock s SET reserved = s.reserved + w.quantity
    FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
    WHERE s.product_id = w.product_id;
    RETURN true;
  END
  $fn$
`
}
