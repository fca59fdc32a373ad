/**
 * The checkout API of 2026-01-30: the official line-items format (`line-items-*.ts`): `line_items`,
 * `currency` and `capabilities` on create, `fulfillment_details`, `selected_fulfillment_options`,
 * per-line `totals`, `payment_data {handler_id, instrument}`, and the 3-D Secure flow.
 */
import type { CheckoutCodec } from "./codec.ts"
import { makeLineItemsCodec } from "./line-items-codec.ts"

export const checkoutCodec20260130: CheckoutCodec = makeLineItemsCodec("2026-01-30")
