/**
 * What one API version of the Delegate Payment API is on the wire (`DelegateWireCodec`): its
 * request schema, its response schema, its error object with the version's closed `code` enum, and
 * the `{type, code, param}` each kind of refusal takes in it. One codec per version, registered in
 * `versions.ts`; the route picks the codec of the request's `API-Version`.
 */
import type { Either, Schema } from "effect"
import type { ApiVersionName } from "../../../shared/api-versions.ts"
import { DelegatePaymentResponse } from "../../model/delegate-payment.ts"
import type { DelegatePaymentRequest } from "../../model/delegate-payment.ts"
import {
  type DelegateValidationFailure,
  makeDelegatePaymentParser,
  type ValidatedDelegatePayment
} from "../../model/validation.ts"

/**
 * Every refusal of the route other than an idempotency one (those are
 * `src/idempotency/idempotency-errors.ts`), by HTTP status:
 * 400 `invalid_request` (the body does not decode), `invalid_content_type`, `invalid_json`;
 * 401 `unauthorized` (API key), `invalid_signature`; 413 `request_too_large`;
 * 422 `unprocessable` (a rule beyond types); 429 `rate_limited`; 500 `internal`; 503 `unavailable`.
 */
export const DELEGATE_ERROR_STATUS = {
  invalid_request: 400,
  invalid_content_type: 400,
  invalid_json: 400,
  unauthorized: 401,
  invalid_signature: 401,
  request_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503
} as const

export type DelegateErrorCase = keyof typeof DELEGATE_ERROR_STATUS

/** The error `type` of each case: the same in every version (the four-value enum of all of them). */
export const DELEGATE_ERROR_TYPE = {
  invalid_request: "invalid_request",
  invalid_content_type: "invalid_request",
  invalid_json: "invalid_request",
  unauthorized: "invalid_request",
  invalid_signature: "invalid_request",
  request_too_large: "invalid_request",
  unprocessable: "invalid_request",
  rate_limited: "rate_limit_exceeded",
  internal: "processing_error",
  unavailable: "service_unavailable"
} as const satisfies Record<DelegateErrorCase, string>

/**
 * The codes a case may take in some version: the interface document's (2025-09-29, where the
 * common request errors keep their own codes, CONTRACT §3) or one of a closed enum.
 */
export interface DelegateCaseCodes {
  readonly invalid_request: "invalid_card"
  readonly invalid_content_type: "invalid_content_type" | "invalid_card"
  readonly invalid_json: "invalid_json" | "invalid_card"
  readonly unauthorized: "unauthorized" | "invalid_card"
  readonly invalid_signature: "invalid_signature" | "invalid_card"
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

/** The decoded, validated request, or the 400/422 refusal (error body in the version's codes). */
export type DelegatePaymentParser = (
  input: unknown,
  nowMillis: number
) => Either.Either<ValidatedDelegatePayment, DelegateValidationFailure>

export interface DelegateWireCodec {
  readonly version: ApiVersionName
  /** The request body as the version defines it (what the route decodes with, and documents). */
  readonly request: Schema.Schema<any, any, never>
  /** Decode with `request`, then the rules beyond types (`delegate-payment/model/validation.ts`). */
  readonly parse: DelegatePaymentParser
  /** The 201 body (the same shape in every version). */
  readonly response: typeof DelegatePaymentResponse
  /** The version's error object, with its closed `code` enum (documentation and tests). */
  readonly error: Schema.Schema<any, any, never>
  /** The version's `code` enum. */
  readonly codes: ReadonlyArray<string>
  readonly errors: DelegateErrorVocabulary<string>
}

/**
 * A codec from a version's request schema (decoding to a request the domain validates) and its
 * error codes: `parse` decodes with exactly `request`.
 */
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
