/**
 * `CheckoutStore.lockStock`: locks the shards, then the stock rows, of `p_products` (product-id order),
 * takes the shards' free units back to the stock rows, and returns the units available to `p_session`
 * at `p_now`, its own and expired reservations added back (`docs/concurrency.md#stock-accounting`).
 */
import type { SqlFunction } from "./sql-function.ts"
import { STOCK_SHARDS } from "./stock-shards.ts"

export const checkoutLockStock: SqlFunction = {
  name: "checkout_lock_stock",
  version: 3,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_lock_stock(p_products text[], p_session text, p_now timestamptz)
  RETURNS TABLE (out_product text, out_available integer)
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  DECLARE
    v_products text[];
    v_free integer[];
    v_lent_products text[];
    v_lent integer[];
  BEGIN
    -- Every shard of every product with a stock row exists before they are locked: a shard row
    -- that appeared after the lock could be lent units the recall below would miss. A product's
    -- shards are created all at once, so one probe per product tells whether they exist.
    INSERT INTO stock_shards (product_id, shard, free)
    SELECT s.product_id, n.shard, 0
    FROM stock s CROSS JOIN generate_series(0, ${STOCK_SHARDS - 1}) AS n (shard)
    WHERE s.product_id = ANY (p_products)
      AND NOT EXISTS (SELECT FROM stock_shards h WHERE h.product_id = s.product_id)
    ORDER BY s.product_id, n.shard
    ON CONFLICT (product_id, shard) DO NOTHING;
    SELECT array_agg(g.product_id ORDER BY g.product_id), array_agg(g.free ORDER BY g.product_id)
    INTO v_lent_products, v_lent
    FROM (
      SELECT l.product_id, SUM(l.free)::integer AS free
      FROM (
        SELECT h.product_id, h.free FROM stock_shards h
        WHERE h.product_id = ANY (p_products)
        ORDER BY h.product_id, h.shard
        FOR UPDATE
      ) l
      GROUP BY l.product_id
      HAVING SUM(l.free) > 0
    ) g;
    SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
    INTO v_products, v_free
    FROM (
      SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
      WHERE s.product_id = ANY (p_products)
      ORDER BY s.product_id
      FOR UPDATE
    ) l;
    IF v_lent_products IS NOT NULL THEN
      UPDATE stock_shards h SET free = 0 WHERE h.product_id = ANY (v_lent_products) AND h.free > 0;
      UPDATE stock s SET reserved = s.reserved - t.free
      FROM unnest(v_lent_products, v_lent) AS t (product_id, free)
      WHERE s.product_id = t.product_id;
    END IF;
    RETURN QUERY
      SELECT l.product_id, (l.free + COALESCE(t.free, 0) + COALESCE(b.back, 0))::integer
      FROM unnest(v_products, v_free) AS l (product_id, free)
      LEFT JOIN unnest(v_lent_products, v_lent) AS t (product_id, free) ON t.product_id = l.product_id
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
