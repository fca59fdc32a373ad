/**
 * 2026-01-30, the official Delegate Payment API of that version (`spec/2026-01-30`, both the JSON
 * schema and the OpenAPI file): `iin` at most 6 digits, at least one risk signal, `display_last4`
 * exactly 4 digits, and the four-code error enum (no in-flight code: a twin in flight is
 * `duplicate_request`, `src/idempotency/idempotency-errors.ts`).
 */
import { makeDelegateWireCodec } from "./codec.ts"
import { officialDelegateError, officialDelegateErrors, officialDelegatePaymentRequest } from "./official-schemas.ts"

export const CODES_2026_01_30 = [
  "invalid_card",
  "duplicate_request",
  "idempotency_conflict",
  "too_many_requests"
] as const

export const DELEGATE_WIRE_2026_01_30 = makeDelegateWireCodec({
  version: "2026-01-30",
  request: officialDelegatePaymentRequest({ iinDigits: 6, minRiskSignals: 1 }),
  error: officialDelegateError(CODES_2026_01_30),
  codes: CODES_2026_01_30,
  errors: officialDelegateErrors
})
