/** 2026-04-17 (`spec/2026-04-17`): `risk_signals` may be empty, `iin` 6 to 8 digits, the enum has idempotency codes. */
import { makeDelegateWireCodec } from "./codec.ts"
import { officialDelegateError, officialDelegateErrors, officialDelegatePaymentRequest } from "./official-schemas.ts"

export const CODES_2026_04_17 = [
  "invalid_card",
  "duplicate_request",
  "idempotency_conflict",
  "too_many_requests",
  "idempotency_key_required",
  "idempotency_in_flight"
] as const

export const DELEGATE_WIRE_2026_04_17 = makeDelegateWireCodec({
  version: "2026-04-17",
  request: officialDelegatePaymentRequest({ iinDigits: 8, minRiskSignals: 0 }),
  error: officialDelegateError(CODES_2026_04_17),
  codes: CODES_2026_04_17,
  errors: officialDelegateErrors
})
