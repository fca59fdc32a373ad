/**
 * The error objects of idempotency failures, per error family and API version: a route answers in
 * the family its group declares (`ErrorFamily`, `src/platform/http/route-declarations.ts`), in the
 * version whose rules it follows (`idempotency/model/rules.ts`). Each object keeps to that version's
 * closed sets:
 *
 * - checkout: 2025-09-29 (CONTRACT §6) and 2026-01-30, whose `Error.type` enum has
 *   `request_not_idempotent`, answer conflicts and in-flight twins with that type; 2026-04-17
 *   removed it (`type` ∈ invalid_request | processing_error | service_unavailable), so every
 *   idempotency error there is `invalid_request` (checkout RFC §6.4). Codes are free strings.
 * - delegate payment: `type` is always `invalid_request`; `code` is from the version's closed enum.
 *   2025-09-29 keeps the interface document's set plus `idempotency_in_flight` (CONTRACT §3);
 *   2026-01-30's enum has no in-flight code, so a twin in flight is `duplicate_request`, the one
 *   code of that enum that says "this request is already being handled"; 2026-04-17 has
 *   `idempotency_key_required` and `idempotency_in_flight`. A malformed key is `invalid_card`, the
 *   delegate API's code for any refused input, in every version.
 */
import type { ApiVersionName } from "../shared/api-versions.ts"
import type { IdempotencyFailure } from "./model/rules.ts"

export type { IdempotencyFailure } from "./model/rules.ts"

/** The `param` of an error about the `Idempotency-Key` header. */
export const IDEMPOTENCY_KEY_PARAM = "$.headers['Idempotency-Key']"

export type IdempotencyErrorCode =
  | "idempotency_key_required"
  | "invalid"
  | "invalid_card"
  | "idempotency_conflict"
  | "idempotency_in_flight"
  | "duplicate_request"

/** The error object of an idempotency failure, in the wire shape of the route family. */
export interface IdempotencyErrorBody {
  readonly type: "invalid_request" | "request_not_idempotent"
  readonly code: IdempotencyErrorCode
  readonly message: string
  readonly param?: string
}

/** The error objects of one family in one version. */
export type IdempotencyErrorFlavour = (failure: IdempotencyFailure) => IdempotencyErrorBody

const messages: Record<IdempotencyFailure, string> = {
  missing_key: "The Idempotency-Key header is required on every POST request; send a unique key " +
    "(a UUID v4 is recommended) and the same key when retrying.",
  invalid_key: "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.",
  conflict: "This Idempotency-Key was already used with a different request body.",
  in_flight: "A request with this Idempotency-Key is still being processed; retry shortly."
}

/** Failures about the header itself name it in `param`; the others concern the earlier request. */
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

// ---------------------------------------------------------------------------------------------
// Checkout (also the service's own APIs, which keep 2025-09-29's)

/** The `code` of each failure on the checkout API: the same in every version. */
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

/** The `type` of a conflict or an in-flight twin on the checkout API, per version. */
const checkoutReplayType: Record<ApiVersionName, CheckoutIdempotencyType> = {
  "2025-09-29": "request_not_idempotent",
  "2026-01-30": "request_not_idempotent",
  "2026-04-17": "invalid_request"
}

/**
 * Whether the checkout error `type` `request_not_idempotent` exists in `version` (it left the enum in
 * 2026-04-17): the only error type that differs between versions, so each version's document says
 * which it has.
 */
export const hasRequestNotIdempotentType = (version: ApiVersionName): boolean =>
  checkoutReplayType[version] === "request_not_idempotent"

export interface CheckoutIdempotencyError<F extends IdempotencyFailure> {
  readonly type: CheckoutIdempotencyType
  readonly code: CheckoutIdempotencyCodes[F]
  readonly message: string
  readonly param?: string
}

/**
 * The checkout error object of `failure` in `version`: what the idempotency middleware answers on
 * checkout routes, and what the completion answers when another payment of the session is in
 * progress (`"in_flight"`; the route may replace `message`).
 */
export const checkoutIdempotencyError = <F extends IdempotencyFailure>(
  version: ApiVersionName,
  failure: F
): CheckoutIdempotencyError<F> =>
  body(failure, aboutTheHeader(failure) ? "invalid_request" : checkoutReplayType[version], checkoutCodes[failure])

// ---------------------------------------------------------------------------------------------
// Delegate payment

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

/** The delegate payment error object of `failure` in `version`. */
export const delegateIdempotencyError = (version: ApiVersionName, failure: IdempotencyFailure): IdempotencyErrorBody =>
  body(failure, "invalid_request", delegateCodes[version][failure])

// ---------------------------------------------------------------------------------------------
// Delegate authentication (2026-04-17 only; its RFC's rules, which are the fixed ones)

const delegateAuthenticationCodes: Record<IdempotencyFailure, DelegateIdempotencyCode> = {
  missing_key: "invalid_card",
  invalid_key: "invalid_card",
  conflict: "idempotency_conflict",
  in_flight: "duplicate_request"
}

/**
 * The Delegate Authentication API's error object of `failure`: its `code` enum is closed
 * (`invalid_card`, `duplicate_request`, `idempotency_conflict`), in every version it is asked in.
 */
export const delegateAuthenticationIdempotencyError = (failure: IdempotencyFailure): IdempotencyErrorBody =>
  body(failure, "invalid_request", delegateAuthenticationCodes[failure])

// ---------------------------------------------------------------------------------------------
// By family

/** The families of `src/platform/http/route-declarations.ts` (`ErrorFamilyName`). */
export type IdempotencyErrorFamily = "checkout" | "delegate" | "delegate_authentication"

export const idempotencyErrorsOf: Record<
  IdempotencyErrorFamily,
  (version: ApiVersionName) => IdempotencyErrorFlavour
> = {
  checkout: (version) => (failure) => checkoutIdempotencyError(version, failure),
  delegate: (version) => (failure) => delegateIdempotencyError(version, failure),
  delegate_authentication: () => delegateAuthenticationIdempotencyError
}
