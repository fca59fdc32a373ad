/** One codec per served version: the route speaks the request's, and each version's OpenAPI document its own. */
import type { ApiVersionName } from "../../../shared/api-versions.ts"
import type { DelegateWireCodec } from "./codec.ts"
import { DELEGATE_WIRE_2025_09_29 } from "./v2025-09-29.ts"
import { DELEGATE_WIRE_2026_01_30 } from "./v2026-01-30.ts"
import { DELEGATE_WIRE_2026_04_17 } from "./v2026-04-17.ts"

export const DELEGATE_WIRE: Readonly<Record<ApiVersionName, DelegateWireCodec>> = {
  "2025-09-29": DELEGATE_WIRE_2025_09_29,
  "2026-01-30": DELEGATE_WIRE_2026_01_30,
  "2026-04-17": DELEGATE_WIRE_2026_04_17
}
