/**
 * CheckoutStore.releaseReservations (p_consume false) and consumeReservations (true): deletes
 * p_session's rows and takes them off the counters (consuming: off the stock on hand too).
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutRemoveReservations: SqlFunction = {
  name: "checkout_remove_reservations",
  version: 2,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_remove_reservations(p_session text, p_consume boolean) RETURNS void
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_products text[];
  BEGIN
    SELECT array_agg(r.product_id) INTO v_products FROM reservations r WHERE r.session_id = p_session;
    IF v_products IS NULL THEN
      RETURN;
    END IF;
    PERFORM 1 FROM stock s WHERE s.product_id = ANY (v_products) ORDER BY s.product_id FOR UPDATE;
    WITH removed AS (
      DELETE FROM reservations r WHERE r.session_id = p_session RETURNING r.product_id, r.quantity
    )
    UPDATE stock s
    SET reserved = s.reserved - removed.quantity,
        on_hand = CASE WHEN p_consume THEN s.on_hand - removed.quantity ELSE s.on_hand END
    FROM removed
    WHERE s.product_id = removed.product_id;
  END
  $fn$
`
}
