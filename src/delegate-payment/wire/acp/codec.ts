/** What one version of the Delegate Payment API is on the wire: request, response, error object, refusal codes. */
import type { Either, Schema } from "effect"
import type { ApiVersionName } from "../../../shared/api-versions.ts"
import { DelegatePaymentResponse } from "../../model/delegate-payment.ts"
import type { DelegatePaymentRequest } from "../../model/delegate-payment.ts"
import {
  type DelegateValidationFailure,
  makeDelegatePaymentParser,
  type ValidatedDelegatePayment
} from "../../model/validation.ts"

/** Every refusal of the route but the idempotency ones (`src/idempotency/idempotency-errors.ts`), by HTTP status. */
export const DELEGATE_ERROR_STATUS = {
  invalid_request: 400,
  invalid_content_type: 400,
  invalid_json: 400,
  unauthorized: 401,
  invalid_signature: 401,
  /** A merchant key: the route takes an agent key. */
  forbidden: 403,
  request_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503
} as const

export type DelegateErrorCase = keyof typeof DELEGATE_ERROR_STATUS

/** The same in every version. */
export const DELEGATE_ERROR_TYPE = {
  invalid_request: "invalid_request",
  invalid_content_type: "invalid_request",
  invalid_json: "invalid_request",
  unauthorized: "invalid_request",
  invalid_signature: "invalid_request",
  forbidden: "invalid_request",
  request_too_large: "invalid_request",
  unprocessable: "invalid_request",
  rate_limited: "rate_limit_exceeded",
  internal: "processing_error",
  unavailable: "service_unavailable"
} as const satisfies Record<DelegateErrorCase, string>

/** The codes a case takes in some version: 2025-09-29's own (CONTRACT §3) or a member of an official closed enum. */
export interface DelegateCaseCodes {
  readonly invalid_request: "invalid_card"
  readonly invalid_content_type: "invalid_content_type" | "invalid_card"
  readonly invalid_json: "invalid_json" | "invalid_card"
  readonly unauthorized: "unauthorized" | "invalid_card"
  readonly invalid_signature: "invalid_signature" | "invalid_card"
  readonly forbidden: "forbidden" | "invalid_card"
  readonly request_too_large: "request_too_large" | "invalid_card"
  readonly unprocessable: "invalid_card"
  readonly rate_limited: "too_many_requests"
  readonly internal: "processing_error" | "too_many_requests"
  readonly unavailable: "service_unavailable" | "too_many_requests"
}

/** How each case looks in one version whose codes are `Code`; `param` is used when the failure names none. */
export type DelegateErrorVocabulary<Code extends string> = {
  readonly [C in DelegateErrorCase]: { readonly code: DelegateCaseCodes[C] & Code; readonly param?: string }
}

export type DelegatePaymentParser = (
  input: unknown,
  nowMillis: number
) => Either.Either<ValidatedDelegatePayment, DelegateValidationFailure>

export interface DelegateWireCodec {
  readonly version: ApiVersionName
  /** What the route decodes with, and documents. */
  readonly request: Schema.Schema<any, any, never>
  /** Decode with `request`, then the rules beyond types (`model/validation.ts`). */
  readonly parse: DelegatePaymentParser
  readonly response: typeof DelegatePaymentResponse
  /** For documentation and tests. */
  readonly error: Schema.Schema<any, any, never>
  readonly codes: ReadonlyArray<string>
  readonly errors: DelegateErrorVocabulary<string>
}

export const makeDelegateWireCodec = <A extends DelegatePaymentRequest, I, const Codes extends ReadonlyArray<string>>(
  spec: {
    readonly version: ApiVersionName
    readonly request: Schema.Schema<A, I, never>
    readonly error: Schema.Schema<any, any, never>
    readonly codes: Codes
    readonly errors: DelegateErrorVocabulary<Codes[number]>
  }
): DelegateWireCodec => ({
  ...spec,
  parse: makeDelegatePaymentParser(spec.request),
  response: DelegatePaymentResponse
})
