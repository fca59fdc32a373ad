/**
 * `CheckoutStore.releaseReservations` (`p_consume` false) and `consumeReservations` (true). Released units
 * become free in the session's shard (at the stock row for a product without shards); consumed ones
 * leave the stock row, whose `on_hand >= 0` check guards them. Shards are locked before stock rows.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutRemoveReservations: SqlFunction = {
  name: "checkout_remove_reservations",
  version: 3,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_remove_reservations(p_session text, p_consume boolean) RETURNS void
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_shard smallint := stock_shard_of(p_session);
    v_products text[];
    v_sharded text[] := '{}';
  BEGIN
    SELECT array_agg(r.product_id) INTO v_products FROM reservations r WHERE r.session_id = p_session;
    IF v_products IS NULL THEN
      RETURN;
    END IF;
    IF NOT p_consume THEN
      SELECT COALESCE(array_agg(h.product_id), '{}') INTO v_sharded FROM (
        SELECT h.product_id FROM stock_shards h
        WHERE h.product_id = ANY (v_products) AND h.shard = v_shard
        ORDER BY h.product_id
        FOR UPDATE
      ) h;
    END IF;
    IF cardinality(v_sharded) < cardinality(v_products) THEN
      PERFORM 1 FROM stock s
      WHERE s.product_id = ANY (v_products) AND s.product_id <> ALL (v_sharded)
      ORDER BY s.product_id
      FOR UPDATE;
    END IF;
    WITH removed AS (
      DELETE FROM reservations r WHERE r.session_id = p_session RETURNING r.product_id, r.quantity
    ), released AS (
      UPDATE stock_shards h SET free = h.free + removed.quantity
      FROM removed
      WHERE h.product_id = removed.product_id AND h.shard = v_shard AND h.product_id = ANY (v_sharded)
    )
    UPDATE stock s
    SET reserved = s.reserved - removed.quantity,
        on_hand = CASE WHEN p_consume THEN s.on_hand - removed.quantity ELSE s.on_hand END
    FROM removed
    WHERE s.product_id = removed.product_id AND s.product_id <> ALL (v_sharded);
  END
  $fn$
`
}
