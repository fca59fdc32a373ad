/** 2025-09-29, the interface document's API (CONTRACT §7); errors every API shares keep their codes (CONTRACT §3). */
import { DelegateError, DelegatePaymentRequest } from "../../model/delegate-payment.ts"
import { makeDelegateWireCodec } from "./codec.ts"

export const CODES_2025_09_29 = [
  "invalid_card",
  "duplicate_request",
  "idempotency_conflict",
  "too_many_requests",
  "idempotency_in_flight",
  "unauthorized",
  "invalid_signature",
  "forbidden",
  "invalid_content_type",
  "invalid_json",
  "request_too_large",
  "processing_error",
  "service_unavailable"
] as const

export const DELEGATE_WIRE_2025_09_29 = makeDelegateWireCodec({
  version: "2025-09-29",
  request: DelegatePaymentRequest,
  error: DelegateError,
  codes: CODES_2025_09_29,
  errors: {
    invalid_request: { code: "invalid_card" },
    invalid_content_type: { code: "invalid_content_type" },
    invalid_json: { code: "invalid_json" },
    unauthorized: { code: "unauthorized" },
    invalid_signature: { code: "invalid_signature" },
    forbidden: { code: "forbidden" },
    request_too_large: { code: "request_too_large" },
    unprocessable: { code: "invalid_card" },
    rate_limited: { code: "too_many_requests" },
    internal: { code: "processing_error" },
    unavailable: { code: "service_unavailable" }
  }
})
