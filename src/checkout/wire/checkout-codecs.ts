/** The checkout API's codec of every served version: the request's `API-Version` picks one. */
import type { ApiVersionName } from "../../shared/api-versions.ts"
import type { CheckoutCodec } from "./checkout-codec.ts"
import { checkoutCodec20250929 } from "./codec-2025-09-29.ts"
import { makeCodec2026 } from "./codec-2026.ts"

export const checkoutCodecs: { readonly [V in ApiVersionName]: CheckoutCodec } = {
  "2025-09-29": checkoutCodec20250929,
  "2026-01-30": makeCodec2026("2026-01-30"),
  "2026-04-17": makeCodec2026("2026-04-17")
}
