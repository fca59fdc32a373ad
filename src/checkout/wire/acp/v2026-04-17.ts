/**
 * The checkout API of 2026-04-17: the line-items format of 2026-01-30 (`line-items-*.ts`) with what
 * this version adds there: order notes, marketing consents, the feed price of an item, the
 * address's `company`, fulfillment details on complete, the typed order of a completed session,
 * and an `Idempotency-Key` on every POST (`src/idempotency/model/rules.ts`).
 */
import type { CheckoutCodec } from "./codec.ts"
import { makeLineItemsCodec } from "./line-items-codec.ts"

export const checkoutCodec20260417: CheckoutCodec = makeLineItemsCodec("2026-04-17")
