/** Idempotency error objects per error family and API version (`docs/decisions.md`, "Rules per version"). */
import type { ApiVersionName } from "../shared/api-versions.ts"
import type { IdempotencyFailure } from "./model/rules.ts"

export type { IdempotencyFailure } from "./model/rules.ts"

export const IDEMPOTENCY_KEY_PARAM = "$.headers['Idempotency-Key']"

export type IdempotencyErrorCode =
  | "idempotency_key_required"
  | "invalid"
  | "invalid_card"
  | "idempotency_conflict"
  | "idempotency_in_flight"
  | "duplicate_request"

export interface IdempotencyErrorBody {
  readonly type: "invalid_request" | "request_not_idempotent"
  readonly code: IdempotencyErrorCode
  readonly message: string
  readonly param?: string
}

/** The error objects of one family in one version. */
export type IdempotencyErrorFlavour = (failure: IdempotencyFailure) => IdempotencyErrorBody

const messages: Record<IdempotencyFailure, string> = {
  missing_key: "The Idempotency-Key header is required on every POST (and PUT) request; send a unique key " +
    "(a UUID v4 is recommended) and the same key when retrying.",
  invalid_key: "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.",
  conflict: "This Idempotency-Key was already used with a different request body.",
  in_flight: "A request with this Idempotency-Key is still being processed; retry shortly."
}

const aboutTheHeader = (failure: IdempotencyFailure) => failure === "missing_key" || failure === "invalid_key"

const body = <T extends IdempotencyErrorBody["type"], C extends IdempotencyErrorCode>(
  failure: IdempotencyFailure,
  type: T,
  code: C
) => ({
  type,
  code,
  message: messages[failure],
  ...(aboutTheHeader(failure) ? { param: IDEMPOTENCY_KEY_PARAM } : {})
})

export interface CheckoutIdempotencyCodes {
  readonly missing_key: "idempotency_key_required"
  readonly invalid_key: "invalid"
  readonly conflict: "idempotency_conflict"
  readonly in_flight: "idempotency_in_flight"
}

const checkoutCodes: CheckoutIdempotencyCodes = {
  missing_key: "idempotency_key_required",
  invalid_key: "invalid",
  conflict: "idempotency_conflict",
  in_flight: "idempotency_in_flight"
}

export type CheckoutIdempotencyType = "invalid_request" | "request_not_idempotent"

const checkoutReplayType: Record<ApiVersionName, CheckoutIdempotencyType> = {
  "2025-09-29": "request_not_idempotent",
  "2026-01-30": "request_not_idempotent",
  "2026-04-17": "invalid_request"
}

/** Whether checkout's `Error.type` enum has `request_not_idempotent` in `version` (2026-04-17 removed it). */
export const hasRequestNotIdempotentType = (version: ApiVersionName): boolean =>
  checkoutReplayType[version] === "request_not_idempotent"

export interface CheckoutIdempotencyError<F extends IdempotencyFailure> {
  readonly type: CheckoutIdempotencyType
  readonly code: CheckoutIdempotencyCodes[F]
  readonly message: string
  readonly param?: string
}

/** The checkout error object; also the completion's while another payment of the session is in progress. */
export const checkoutIdempotencyError = <F extends IdempotencyFailure>(
  version: ApiVersionName,
  failure: F
): CheckoutIdempotencyError<F> =>
  body(failure, aboutTheHeader(failure) ? "invalid_request" : checkoutReplayType[version], checkoutCodes[failure])

type DelegateIdempotencyCode = Exclude<IdempotencyErrorCode, "invalid">

const delegateCodes: Record<ApiVersionName, Record<IdempotencyFailure, DelegateIdempotencyCode>> = {
  "2025-09-29": {
    missing_key: "invalid_card",
    invalid_key: "invalid_card",
    conflict: "idempotency_conflict",
    in_flight: "idempotency_in_flight"
  },
  "2026-01-30": {
    missing_key: "invalid_card",
    invalid_key: "invalid_card",
    conflict: "idempotency_conflict",
    in_flight: "duplicate_request"
  },
  "2026-04-17": {
    missing_key: "idempotency_key_required",
    invalid_key: "invalid_card",
    conflict: "idempotency_conflict",
    in_flight: "idempotency_in_flight"
  }
}

export const delegateIdempotencyError = (version: ApiVersionName, failure: IdempotencyFailure): IdempotencyErrorBody =>
  body(failure, "invalid_request", delegateCodes[version][failure])

const delegateAuthenticationCodes: Record<IdempotencyFailure, DelegateIdempotencyCode> = {
  missing_key: "invalid_card",
  invalid_key: "invalid_card",
  conflict: "idempotency_conflict",
  in_flight: "duplicate_request"
}

/** The Delegate Authentication API's error object: one for every version, its `code` enum being closed. */
export const delegateAuthenticationIdempotencyError = (failure: IdempotencyFailure): IdempotencyErrorBody =>
  body(failure, "invalid_request", delegateAuthenticationCodes[failure])

export type IdempotencyErrorFamily = "checkout" | "delegate" | "delegate_authentication"

export const idempotencyErrorsOf: Record<
  IdempotencyErrorFamily,
  (version: ApiVersionName) => IdempotencyErrorFlavour
> = {
  checkout: (version) => (failure) => checkoutIdempotencyError(version, failure),
  delegate: (version) => (failure) => delegateIdempotencyError(version, failure),
  delegate_authentication: () => delegateAuthenticationIdempotencyError
}
