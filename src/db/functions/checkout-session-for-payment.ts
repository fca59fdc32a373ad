/**
 * `CheckoutStore.lockSessionForPayment` and `readSessionForPayment`: the session row (locked when
 * `p_lock`), then its latest attempt and coupon holds in statements of their own, which see what the
 * transaction waited for committed (`docs/concurrency.md#ground-rules`). No row without the session.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutSessionForPayment: SqlFunction = {
  name: "checkout_session_for_payment",
  version: 2,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_session_for_payment(p_session text, p_lock boolean)
  RETURNS TABLE (out_data json, out_internal json, out_version bigint, out_attempt jsonb, out_coupon_holds text[])
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
  BEGIN
    IF p_lock THEN
      SELECT s.data, s.internal, s.version INTO out_data, out_internal, out_version FROM checkout_sessions s WHERE s.id = p_session FOR UPDATE;
    ELSE
      SELECT s.data, s.internal, s.version INTO out_data, out_internal, out_version FROM checkout_sessions s WHERE s.id = p_session;
    END IF;
    IF NOT FOUND THEN
      RETURN;
    END IF;
    SELECT jsonb_build_object(
             'session_id', a.session_id, 'sequence', a.sequence, 'idempotency_key', a.idempotency_key,
             'amount', a.amount, 'currency', a.currency, 'credential_ref', a.credential_ref, 'state', a.state,
             'charge_id', a.charge_id,
             'created_ms', (extract(epoch FROM a.created_at) * 1000)::float8,
             'updated_ms', (extract(epoch FROM a.updated_at) * 1000)::float8)
    INTO out_attempt
    FROM payment_attempts a WHERE a.session_id = p_session
    ORDER BY a.sequence DESC LIMIT 1;
    out_coupon_holds := ARRAY(SELECT h.coupon_id FROM coupon_holds h WHERE h.session_id = p_session ORDER BY h.coupon_id);
    RETURN NEXT;
  END
  $fn$
`
}
