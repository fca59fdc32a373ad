/**
 * The errors of the Delegate Payment API, one class per HTTP status, each a typed failure. On the
 * wire they are the delegate error object of the interface document, `{type, code, message,
 * param?}` (no `_tag`), like the checkout errors of `errors.ts`.
 *
 * Codes: the interface document's closed set (`invalid_card`, `duplicate_request`,
 * `idempotency_conflict`, `too_many_requests`) plus `idempotency_in_flight` (CONTRACT §3), and
 * for 500/503 the codes `processing_error`/`service_unavailable` named by CONTRACT §3 (the closed
 * set has no code for them; the ACP specification later added `service_unavailable` too).
 *
 * The common request errors (401, API-Version 400, content type / JSON 400, 413) are the shared
 * ones of `errors.ts`, identical on every API.
 */
import { Schema } from "effect"
import { JsonPath, optional } from "../shared/schema-helpers.ts"
import { wire } from "../platform/http/errors.ts"

const common = { message: Schema.String, param: optional(JsonPath) }

/** 400: the body does not decode (first problem, `param` its JSONPath). */
export class DelegateBadRequest extends Schema.TaggedError<DelegateBadRequest>()("DelegateBadRequest", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("invalid_card"),
  ...common
}) {}

/** 409: idempotency conflicts (answered by the idempotency middleware in front of the route). */
export class DelegateConflict extends Schema.TaggedError<DelegateConflict>()("DelegateConflict", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("idempotency_conflict", "idempotency_in_flight", "duplicate_request"),
  ...common
}) {}

/** 422: a semantic rule of CONTRACT §7 (Luhn, expiry, allowance, currency, country, blocked risk). */
export class DelegateUnprocessable extends Schema.TaggedError<DelegateUnprocessable>()("DelegateUnprocessable", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("invalid_card"),
  ...common
}) {}

/** 429: the API key's request budget is spent; the response carries `Retry-After`. */
export class DelegateRateLimited extends Schema.TaggedError<DelegateRateLimited>()("DelegateRateLimited", {
  type: Schema.Literal("rate_limit_exceeded"),
  code: Schema.Literal("too_many_requests"),
  ...common
}) {}

/** 500: an unexpected failure (logged; never detailed in the response). */
export class DelegateInternalError extends Schema.TaggedError<DelegateInternalError>()("DelegateInternalError", {
  type: Schema.Literal("processing_error"),
  code: Schema.Literal("processing_error"),
  ...common
}) {}

/** 503: storage unreachable; the response carries `Retry-After`. */
export class DelegateServiceUnavailable extends Schema.TaggedError<DelegateServiceUnavailable>()(
  "DelegateServiceUnavailable",
  {
    type: Schema.Literal("service_unavailable"),
    code: Schema.Literal("service_unavailable"),
    ...common
  }
) {}

export const DelegateBadRequestWire = wire(DelegateBadRequest, 400)
export const DelegateConflictWire = wire(DelegateConflict, 409)
export const DelegateUnprocessableWire = wire(DelegateUnprocessable, 422)
export const DelegateRateLimitedWire = wire(DelegateRateLimited, 429)
export const DelegateInternalErrorWire = wire(DelegateInternalError, 500)
export const DelegateServiceUnavailableWire = wire(DelegateServiceUnavailable, 503)

export type DelegateApiError =
  | DelegateBadRequest
  | DelegateConflict
  | DelegateUnprocessable
  | DelegateRateLimited
  | DelegateInternalError
  | DelegateServiceUnavailable

export const delegateInternalError = () =>
  new DelegateInternalError({
    type: "processing_error",
    code: "processing_error",
    message: "An unexpected error occurred."
  })

export const delegateServiceUnavailable = () =>
  new DelegateServiceUnavailable({
    type: "service_unavailable",
    code: "service_unavailable",
    message: "The service is temporarily unavailable; retry shortly."
  })
