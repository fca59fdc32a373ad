/**
 * The Delegate Payment API of every served version, one codec each (`codec.ts`): the
 * route decodes, validates and refuses in the codec of the request's `API-Version`, and the
 * OpenAPI document of a version is built from it (`delegateGroupFor`, `delegate-payment/http/api.ts`).
 * 2025-09-29 is the interface document's API unchanged; 2026-01-30 and 2026-04-17 are the official
 * ones (docs/protocol-versions.md §4).
 */
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
