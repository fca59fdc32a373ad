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
import { featureApi } from "../platform/http/feature-api.ts"
import { DelegatePaymentRequest, DelegatePaymentResponse } from "./delegate-payment.ts"
import { optional } from "../shared/schema-helpers.ts"
import {
  DelegateBadRequestWire,
  DelegateConflictWire,
  DelegateInternalErrorWire,
  DelegateRateLimitedWire,
  DelegateServiceUnavailableWire,
  DelegateUnprocessableWire
} from "./delegate-errors.ts"
import { NotFoundWire } from "../platform/http/errors.ts"
import { RequestSignature } from "../platform/http/request-signature.ts"
import { ErrorFamily, Idempotent } from "../platform/http/route-declarations.ts"
import { ApiVersion, Authorization } from "../platform/http/security.ts"

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
