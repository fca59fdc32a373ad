/** 2026-01-30 (`spec/2026-01-30`): `iin` exactly 6 digits, at least one risk signal, the four-code error enum. */
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
