/**
 * The Delegate Payment API (CONTRACT §7), one request and error object per version (`wire/acp/`). The order of its
 * checks, and why: `docs/decisions.md`, "Delegate payment vault".
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { delegateIdempotencyError } from "../../idempotency/idempotency-errors.ts"
import { IDEMPOTENCY_RULES, type IdempotencyFailure } from "../../idempotency/model/rules.ts"
import { NotFoundWire, wire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { RequestSignature } from "../../platform/http/request-signature.ts"
import { ErrorFamily, Idempotent, VersionedIdempotency } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion } from "../../platform/http/security.ts"
import { API_VERSION_NAMES, type ApiVersionName } from "../../shared/api-versions.ts"
import { JsonPath, optional } from "../../shared/schema-helpers.ts"
import { DelegatePaymentRequest, DelegatePaymentResponse } from "../model/delegate-payment.ts"
import {
  DELEGATE_ERROR_STATUS,
  DELEGATE_ERROR_TYPE,
  type DelegateCaseCodes,
  type DelegateErrorCase
} from "../wire/acp/codec.ts"
import { DELEGATE_WIRE } from "../wire/acp/versions.ts"

// One class per HTTP status, with its codes in every version; a request gets its version's (`delegateError`). The
// API-Version 400 and the role's 404 are the common ones (`src/platform/http/errors.ts`): they name no version.
const common = { message: Schema.String, param: optional(JsonPath) }

/** 400: the body or a header of the request is refused (first problem, `param` its JSONPath). */
export class DelegateBadRequest extends Schema.TaggedError<DelegateBadRequest>()("DelegateBadRequest", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("invalid_card", "idempotency_key_required", "invalid_content_type", "invalid_json"),
  ...common
}) {}

export class DelegateUnauthorized extends Schema.TaggedError<DelegateUnauthorized>()("DelegateUnauthorized", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("unauthorized", "invalid_signature", "invalid_card"),
  ...common
}) {}

/** 403: a merchant key (the route takes an agent key). */
export class DelegateForbidden extends Schema.TaggedError<DelegateForbidden>()("DelegateForbidden", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("forbidden", "invalid_card"),
  ...common
}) {}

/** 409: idempotency conflicts (answered by the idempotency middleware in front of the route). */
export class DelegateConflict extends Schema.TaggedError<DelegateConflict>()("DelegateConflict", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("idempotency_conflict", "idempotency_in_flight", "duplicate_request"),
  ...common
}) {}

export class DelegatePayloadTooLarge extends Schema.TaggedError<DelegatePayloadTooLarge>()("DelegatePayloadTooLarge", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("request_too_large", "invalid_card"),
  ...common
}) {}

/** 422: a rule beyond types (CONTRACT §7); from 2026-04-17 also the idempotency conflict. */
export class DelegateUnprocessable extends Schema.TaggedError<DelegateUnprocessable>()("DelegateUnprocessable", {
  type: Schema.Literal("invalid_request"),
  code: Schema.Literal("invalid_card", "idempotency_conflict"),
  ...common
}) {}

/** 429, with `Retry-After`. */
export class DelegateRateLimited extends Schema.TaggedError<DelegateRateLimited>()("DelegateRateLimited", {
  type: Schema.Literal("rate_limit_exceeded"),
  code: Schema.Literal("too_many_requests"),
  ...common
}) {}

/** 500: an unexpected failure (logged; never detailed in the response). */
export class DelegateInternalError extends Schema.TaggedError<DelegateInternalError>()("DelegateInternalError", {
  type: Schema.Literal("processing_error"),
  code: Schema.Literal("processing_error", "too_many_requests"),
  ...common
}) {}

/** 503: storage unreachable, with `Retry-After`. */
export class DelegateServiceUnavailable extends Schema.TaggedError<DelegateServiceUnavailable>()(
  "DelegateServiceUnavailable",
  {
    type: Schema.Literal("service_unavailable"),
    code: Schema.Literal("service_unavailable", "too_many_requests"),
    ...common
  }
) {}

export const DelegateBadRequestWire = wire(DelegateBadRequest, 400)
export const DelegateUnauthorizedWire = wire(DelegateUnauthorized, 401)
export const DelegateForbiddenWire = wire(DelegateForbidden, 403)
export const DelegateConflictWire = wire(DelegateConflict, 409)
export const DelegatePayloadTooLargeWire = wire(DelegatePayloadTooLarge, 413)
export const DelegateUnprocessableWire = wire(DelegateUnprocessable, 422)
export const DelegateRateLimitedWire = wire(DelegateRateLimited, 429)
export const DelegateInternalErrorWire = wire(DelegateInternalError, 500)
export const DelegateServiceUnavailableWire = wire(DelegateServiceUnavailable, 503)

export type DelegateApiError =
  | DelegateBadRequest
  | DelegateUnauthorized
  | DelegateForbidden
  | DelegatePayloadTooLarge
  | DelegateUnprocessable
  | DelegateRateLimited
  | DelegateInternalError
  | DelegateServiceUnavailable

type CaseFields<C extends DelegateErrorCase> = {
  readonly type: (typeof DELEGATE_ERROR_TYPE)[C]
  readonly code: DelegateCaseCodes[C]
  readonly message: string
  readonly param?: string
}

interface DelegateErrorOfCase {
  readonly invalid_request: DelegateBadRequest
  readonly invalid_content_type: DelegateBadRequest
  readonly invalid_json: DelegateBadRequest
  readonly unauthorized: DelegateUnauthorized
  readonly invalid_signature: DelegateUnauthorized
  readonly forbidden: DelegateForbidden
  readonly request_too_large: DelegatePayloadTooLarge
  readonly unprocessable: DelegateUnprocessable
  readonly rate_limited: DelegateRateLimited
  readonly internal: DelegateInternalError
  readonly unavailable: DelegateServiceUnavailable
}

const errorOfCase: {
  readonly [C in DelegateErrorCase]: (fields: CaseFields<C>) => DelegateErrorOfCase[C]
} = {
  invalid_request: (fields) => new DelegateBadRequest(fields),
  invalid_content_type: (fields) => new DelegateBadRequest(fields),
  invalid_json: (fields) => new DelegateBadRequest(fields),
  unauthorized: (fields) => new DelegateUnauthorized(fields),
  invalid_signature: (fields) => new DelegateUnauthorized(fields),
  forbidden: (fields) => new DelegateForbidden(fields),
  request_too_large: (fields) => new DelegatePayloadTooLarge(fields),
  unprocessable: (fields) => new DelegateUnprocessable(fields),
  rate_limited: (fields) => new DelegateRateLimited(fields),
  internal: (fields) => new DelegateInternalError(fields),
  unavailable: (fields) => new DelegateServiceUnavailable(fields)
}

/** `param` is the failure's, else the one the version gives the case (the header concerned). */
export const delegateError = <C extends DelegateErrorCase>(
  version: ApiVersionName,
  errorCase: C,
  message: string,
  param?: string
): DelegateErrorOfCase[C] => {
  const shape = DELEGATE_WIRE[version].errors[errorCase]
  const at = param ?? shape.param
  return errorOfCase[errorCase]({
    type: DELEGATE_ERROR_TYPE[errorCase],
    code: shape.code,
    message,
    ...(at !== undefined ? { param: at } : {})
  })
}

export const DELEGATE_UNAVAILABLE_MESSAGE = "The service is temporarily unavailable; retry shortly."
export const DELEGATE_INTERNAL_MESSAGE = "An unexpected error occurred."

export const DELEGATE_PAYMENT_PATH = "/agentic_commerce/delegate_payment"

/** For the documentation. */
export const DelegateHeaders = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "API version date, YYYY-MM-DD" }),
  "idempotency-key": optional(
    Schema.String.annotations({ description: "Makes the request safe to retry; echoed in the token metadata" })
  ),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" })),
  signature: optional(Schema.String.annotations({ description: "Optional request signature (CONTRACT §3)" })),
  timestamp: optional(Schema.String.annotations({ description: "Timestamp of the signature" }))
})

/** 404 like an absent route unless the "delegate" role is enabled (`ROLES`); runs first. */
export class DelegateRoleEnabled extends HttpApiMiddleware.Tag<DelegateRoleEnabled>()("acp/DelegateRoleEnabled", {
  failure: NotFoundWire
}) {}

/**
 * `AgentAuthorization`'s check, run just before it so that a 401 (unknown key) or 403 (a merchant key) is in the
 * version's error object, with its enum's code.
 */
export class DelegateAuthentication
  extends HttpApiMiddleware.Tag<DelegateAuthentication>()("acp/DelegateAuthentication", {
    failure: Schema.Union(DelegateUnauthorizedWire, DelegateForbiddenWire)
  })
{}

/** `RequestSignature`'s check, run just before it, for the same reason as `DelegateAuthentication`. */
export class DelegateSignatureCheck
  extends HttpApiMiddleware.Tag<DelegateSignatureCheck>()("acp/DelegateSignatureCheck", {
    failure: DelegateUnauthorizedWire
  })
{}

export class DelegateGroup extends HttpApiGroup.make("delegate")
  .add(
    HttpApiEndpoint.post("tokenize", DELEGATE_PAYMENT_PATH)
      .setHeaders(DelegateHeaders)
      // The 2025-09-29 request; the route decodes each version's with its codec (`DELEGATE_WIRE`).
      .setPayload(DelegatePaymentRequest)
      .addSuccess(DelegatePaymentResponse, { status: 201 })
      .addError(DelegateBadRequestWire)
      .addError(DelegateConflictWire)
      .addError(DelegatePayloadTooLargeWire)
      .addError(DelegateUnprocessableWire)
      .addError(DelegateRateLimitedWire)
      .addError(DelegateInternalErrorWire)
      .addError(DelegateServiceUnavailableWire)
      .annotate(OpenApi.Summary, "Tokenize a card into a vt_ token limited by an allowance")
  )
  // The last added runs first.
  .middleware(RequestSignature)
  .middleware(DelegateSignatureCheck)
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .middleware(DelegateAuthentication)
  .middleware(DelegateRoleEnabled)
  .annotate(Idempotent, true)
  .annotate(ErrorFamily, "delegate")
  .annotate(VersionedIdempotency, true)
  .annotate(OpenApi.Description, "Delegate Payment API (payment provider vault)")
{}

export const DelegateApi = featureApi(DelegateGroup)

interface ErrorPair {
  readonly status: number
  readonly type: string
  readonly code: string
}

/** Every `{status, type, code}` the route answers in `version` (besides the common 400 API-Version and 404). */
export const delegateErrorPairs = (version: ApiVersionName): ReadonlyArray<ErrorPair> => {
  const codec = DELEGATE_WIRE[version]
  const rules = IDEMPOTENCY_RULES[version]
  const refusals = (Object.keys(DELEGATE_ERROR_STATUS) as Array<DelegateErrorCase>).map((errorCase) => ({
    status: DELEGATE_ERROR_STATUS[errorCase],
    type: DELEGATE_ERROR_TYPE[errorCase],
    code: codec.errors[errorCase].code
  }))
  const failures: ReadonlyArray<IdempotencyFailure> = rules.keyRequired
    ? ["missing_key", "invalid_key", "conflict", "in_flight"]
    : ["invalid_key", "conflict", "in_flight"]
  const idempotency = failures.map((failure) => ({
    status: rules.status[failure],
    ...delegateIdempotencyError(version, failure)
  }))
  return [...refusals, ...idempotency]
}

const distinct = (values: ReadonlyArray<string>) => [...new Set(values)] as [string, ...Array<string>]

const errorWire = (status: number, pairs: ReadonlyArray<ErrorPair>) => {
  const here = pairs.filter((pair) => pair.status === status)
  return Schema.Struct({
    type: Schema.Literal(...distinct(here.map((pair) => pair.type))),
    code: Schema.Literal(...distinct(here.map((pair) => pair.code))),
    message: Schema.String,
    param: optional(JsonPath)
  }).annotations(HttpApiSchema.annotations({ status, identifier: `DelegateError${status}` }))
}

const IdempotencyKey = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))

const headersFor = (version: ApiVersionName) =>
  IDEMPOTENCY_RULES[version].keyRequired
    ? Schema.Struct({
      ...DelegateHeaders.fields,
      "idempotency-key": IdempotencyKey.annotations({
        description: "Required: makes the request safe to retry; echoed in the token metadata"
      })
    })
    : DelegateHeaders

const makeGroup = (version: ApiVersionName) => {
  const codec = DELEGATE_WIRE[version]
  const pairs = delegateErrorPairs(version)
  const wire = (status: number) => errorWire(status, pairs)
  class Bearer extends HttpApiMiddleware.Tag<Bearer>()(`acp/DelegateBearer/${version}`, {
    failure: Schema.Union(wire(401), wire(403)),
    security: AgentAuthorization.security
  }) {}
  return HttpApiGroup.make("delegate")
    .add(
      HttpApiEndpoint.post("tokenize", DELEGATE_PAYMENT_PATH)
        .setHeaders(headersFor(version))
        .setPayload(codec.request)
        .addSuccess(codec.response, { status: 201 })
        .addError(wire(400))
        .addError(wire(409))
        .addError(wire(413))
        .addError(wire(422))
        .addError(wire(429))
        .addError(wire(500))
        .addError(wire(503))
        .annotate(OpenApi.Summary, "Tokenize a card into a vt_ token limited by an allowance")
    )
    .middleware(ApiVersion)
    .middleware(Bearer)
    .middleware(DelegateRoleEnabled)
    .annotate(OpenApi.Description, `Delegate Payment API (payment provider vault), API-Version ${version}`)
}

const groups = Object.fromEntries(API_VERSION_NAMES.map((version) => [version, makeGroup(version)])) as Record<
  ApiVersionName,
  ReturnType<typeof makeGroup>
>

/**
 * The group of `version` for its OpenAPI document, not served: its codec's request, and per status exactly the
 * `{type, code}` pairs the route answers in it. Its bearer middleware, for the version's 401 and 403, has no implementation.
 */
export const delegateGroupFor = (version: ApiVersionName) => groups[version]
