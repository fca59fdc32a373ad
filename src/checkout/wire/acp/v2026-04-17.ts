/** 2026-04-17: the line-items format of 2026-01-30 with this version's additions (docs/protocol-versions.md). */
import type { CheckoutCodec } from "./codec.ts"
import { makeLineItemsCodec } from "./line-items-codec.ts"

export const checkoutCodec20260417: CheckoutCodec = makeLineItemsCodec("2026-04-17")
