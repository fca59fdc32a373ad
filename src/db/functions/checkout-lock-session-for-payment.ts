/**
 * The locking read of `checkout_session_for_payment` under the name the previous release calls:
 * its processes keep completing checkouts while a deployment replaces them. This release calls
 * `checkout_session_for_payment` itself.
 */
import type { SqlFunction } from "./sql-function.ts"

export const checkoutLockSessionForPayment: SqlFunction = {
  name: "checkout_lock_session_for_payment",
  version: 4,
  definition: `
  CREATE OR REPLACE FUNCTION checkout_lock_session_for_payment(p_session text)
  RETURNS TABLE (out_data jsonb, out_version bigint, out_attempt jsonb, out_coupon_holds text[])
  LANGUAGE sql AS $fn$ SELECT * FROM checkout_session_for_payment(p_session, true) $fn$
`
}
