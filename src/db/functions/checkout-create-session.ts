/**
 * `CheckoutStore.createSessionReservingStock` in one statement: inserts the session and its reservations
 * only if they fit (`reservationsFit`, as `test/checkout/stock-fits.property.test.ts` checks); returns
 * whether it inserted. Units come from the session's shard, borrowing from the stock row when it lacks;
 * when that lacks too, the subtransaction rolls back and `checkout_lock_stock` decides exactly. Shards
 * before stock rows, each in product-id order (`docs/concurrency.md#stock-accounting`).
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
