/** 2026-01-30: the official line-items format (`line-items-*.ts`, docs/protocol-versions.md). */
import type { CheckoutCodec } from "./codec.ts"
import { makeLineItemsCodec } from "./line-items-codec.ts"

export const checkoutCodec20260130: CheckoutCodec = makeLineItemsCodec("2026-01-30")
