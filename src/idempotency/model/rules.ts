/**
 * The idempotency rules of each API version, as one table (`IDEMPOTENCY_RULES`): whether a POST
 * must carry an `Idempotency-Key`, and the HTTP status of each idempotency failure. The error
 * objects of those failures, per error family and version, are `idempotency-errors.ts`.
 *
 * - 2025-09-29 (the interface document, CONTRACT §6) and 2026-01-30 (the official rules of that
 *   version): the key is optional; the same key with another body is 409 `idempotency_conflict`.
 *   2026-01-30 defines no answer for a request whose twin is still in flight; ours is 409 with
 *   `Retry-After`, as for 2025-09-29.
 * - 2026-04-17 (official checkout RFC §6, delegate payment RFC §5): the key is required on every
 *   POST (400 `idempotency_key_required`); the same key with another body is 422
 *   `idempotency_conflict` (permanent); in flight is 409 `idempotency_in_flight` with `Retry-After`.
 *
 * Which version's rules a route follows: the request's `API-Version` on the ACP APIs (their groups
 * declare `VersionedIdempotency`), `FIXED_RULES_VERSION` on the service's own APIs whatever the
 * header says (`src/idempotency/http/middleware.ts`).
 */
import type { ApiVersionName } from "../../shared/api-versions.ts"

/**
 * What can go wrong with an idempotent POST before it runs: no key where one is required, a key
 * that is not 1–255 printable ASCII characters, a key already used with another request, or a key
 * whose first request is still running.
 */
export type IdempotencyFailure = "missing_key" | "invalid_key" | "conflict" | "in_flight"

export interface IdempotencyRules {
  /** A POST without `Idempotency-Key` is refused (`missing_key`) rather than run unprotected. */
  readonly keyRequired: boolean
  /** The HTTP status of each failure. */
  readonly status: Readonly<Record<IdempotencyFailure, number>>
}

/** Key optional; conflict and in flight are both 409. */
const KEY_OPTIONAL: IdempotencyRules = {
  keyRequired: false,
  status: { missing_key: 400, invalid_key: 400, conflict: 409, in_flight: 409 }
}

/** Key required; a conflict is 422 (a permanent error), in flight 409 (retry after `Retry-After`). */
const KEY_REQUIRED: IdempotencyRules = {
  keyRequired: true,
  status: { missing_key: 400, invalid_key: 400, conflict: 422, in_flight: 409 }
}

export const IDEMPOTENCY_RULES: Readonly<Record<ApiVersionName, IdempotencyRules>> = {
  "2025-09-29": KEY_OPTIONAL,
  "2026-01-30": KEY_OPTIONAL,
  "2026-04-17": KEY_REQUIRED
}

/**
 * The version whose rules (and error objects) the service's own APIs keep whatever `API-Version`
 * says: the interface document's.
 */
export const FIXED_RULES_VERSION: ApiVersionName = "2025-09-29"
