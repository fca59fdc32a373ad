/**
 * The Delegate Payment API definition (the payment provider's card vault, CONTRACT §7):
 * `POST /agentic_commerce/delegate_payment` turns a card into a `vt_` token usable only within its
 * allowance. Handlers: `delegate-handlers.ts`.
 *
 * Middleware, outermost first: `DelegateRoleEnabled` (404 `not_found` when the "delegate" role is
 * switched off, before anything else, so a disabled route looks like an absent one), then bearer
 * `Authorization` (401), then `ApiVersion` (400), then `RequestSignature` (401). Its POSTs are
 * idempotent, and answer in the delegate error object (`ErrorFamily`).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFoundWire, wire } from "../platform/http/errors.ts"
import { featureApi } from "../platform/http/feature-api.ts"
import { RequestSignature } from "../platform/http/request-signature.ts"
import { ErrorFamily, Idempotent } from "../platform/http/route-declarations.ts"
import { ApiVersion, Authorization } from "../platform/http/security.ts"
import { JsonPath, optional } from "../shared/schema-helpers.ts"
import { DelegatePaymentRequest, DelegatePaymentResponse } from "./delegate-payment.ts"

// ---------------------------------------------------------------------------------------------
// Errors

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
 * ones of `src/platform/http/errors.ts`, identical on every API.
 */
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

// ---------------------------------------------------------------------------------------------
// Routes

/** Headers of delegate payment requests, for the documentation (the middleware enforces API-Version). */
export const DelegateHeaders = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "API version date, YYYY-MM-DD" }),
  "idempotency-key": optional(
    Schema.String.annotations({ description: "Makes the request safe to retry; echoed in the token metadata" })
  ),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" })),
  signature: optional(Schema.String.annotations({ description: "Optional request signature (CONTRACT §3)" })),
  timestamp: optional(Schema.String.annotations({ description: "Timestamp of the signature" }))
})

/** Answers 404 `not_found` when the "delegate" role is not enabled (`ROLES`). */
export class DelegateRoleEnabled extends HttpApiMiddleware.Tag<DelegateRoleEnabled>()("acp/DelegateRoleEnabled", {
  failure: NotFoundWire
}) {}

export class DelegateGroup extends HttpApiGroup.make("delegate")
  .add(
    HttpApiEndpoint.post("tokenize", "/agentic_commerce/delegate_payment")
      .setHeaders(DelegateHeaders)
      .setPayload(DelegatePaymentRequest)
      .addSuccess(DelegatePaymentResponse, { status: 201 })
      .addError(DelegateBadRequestWire)
      .addError(DelegateConflictWire)
      .addError(DelegateUnprocessableWire)
      .addError(DelegateRateLimitedWire)
      .addError(DelegateInternalErrorWire)
      .addError(DelegateServiceUnavailableWire)
      .annotate(OpenApi.Summary, "Tokenize a card into a vt_ token limited by an allowance")
  )
  .middleware(RequestSignature)
  .middleware(ApiVersion)
  .middleware(Authorization)
  .middleware(DelegateRoleEnabled)
  .annotate(Idempotent, true)
  .annotate(ErrorFamily, "delegate")
  .annotate(OpenApi.Description, "Delegate Payment API (payment provider vault)")
{}

export const DelegateApi = featureApi(DelegateGroup)
