/** The idempotency rules of each API version (`docs/decisions.md`, "Rules per version"). */
import type { ApiVersionName } from "../../shared/api-versions.ts"

export type IdempotencyFailure = "missing_key" | "invalid_key" | "conflict" | "in_flight"

export interface IdempotencyRules {
  /** A POST without `Idempotency-Key` is refused (`missing_key`) rather than run unprotected. */
  readonly keyRequired: boolean
  readonly status: Readonly<Record<IdempotencyFailure, number>>
}

const KEY_OPTIONAL: IdempotencyRules = {
  keyRequired: false,
  status: { missing_key: 400, invalid_key: 400, conflict: 409, in_flight: 409 }
}

const KEY_REQUIRED: IdempotencyRules = {
  keyRequired: true,
  status: { missing_key: 400, invalid_key: 400, conflict: 422, in_flight: 409 }
}

export const IDEMPOTENCY_RULES: Readonly<Record<ApiVersionName, IdempotencyRules>> = {
  "2025-09-29": KEY_OPTIONAL,
  "2026-01-30": KEY_OPTIONAL,
  "2026-04-17": KEY_REQUIRED
}

/** The version whose rules the service's own APIs keep whatever `API-Version` says: the interface document's. */
export const FIXED_RULES_VERSION: ApiVersionName = "2025-09-29"
