/** The checkout API's codec of every served version: the request's `API-Version` picks one. */
import type { ApiVersionName } from "../../../shared/api-versions.ts"
import type { CheckoutCodec } from "./codec.ts"
import { checkoutCodec20250929 } from "./v2025-09-29.ts"
import { checkoutCodec20260130 } from "./v2026-01-30.ts"
import { checkoutCodec20260417 } from "./v2026-04-17.ts"

export const checkoutCodecs: { readonly [V in ApiVersionName]: CheckoutCodec } = {
  "2025-09-29": checkoutCodec20250929,
  "2026-01-30": checkoutCodec20260130,
  "2026-04-17": checkoutCodec20260417
}
