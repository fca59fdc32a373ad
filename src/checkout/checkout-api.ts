/** The Checkout Session API (merchant): routes, request and response schemas, and their errors. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiHeaders } from "../platform/http/api-headers.ts"
import {
  ConflictWire,
  MethodNotAllowedWire,
  NotFoundWire,
  PaymentRequiredWire,
  TooManyRequestsWire,
  UnprocessableWire
} from "../platform/http/errors.ts"
import { featureApi } from "../platform/http/feature-api.ts"
import { RequestSignature } from "../platform/http/request-signature.ts"
import { Idempotent } from "../platform/http/route-declarations.ts"
import { ApiVersion, Authorization } from "../platform/http/security.ts"
import { StorableString } from "../shared/storable-text.ts"
import {
  CheckoutSession,
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  CheckoutSessionWithOrder
} from "./checkout-schemas.ts"

const SessionPath = Schema.Struct({ checkout_session_id: StorableString })

export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.post("create", "/checkout_sessions")
      .setHeaders(ApiHeaders)
      .setPayload(CheckoutSessionCreateRequest)
      .addSuccess(CheckoutSession, { status: 201 })
      .addError(UnprocessableWire)
      .addError(ConflictWire)
      .addError(TooManyRequestsWire)
  )
  .add(
    HttpApiEndpoint.get("get", "/checkout_sessions/:checkout_session_id")
      .setPath(SessionPath)
      .setHeaders(ApiHeaders)
      .addSuccess(CheckoutSession)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.post("update", "/checkout_sessions/:checkout_session_id")
      .setPath(SessionPath)
      .setHeaders(ApiHeaders)
      .setPayload(CheckoutSessionUpdateRequest)
      .addSuccess(CheckoutSession)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .addError(TooManyRequestsWire)
  )
  .add(
    HttpApiEndpoint.post("complete", "/checkout_sessions/:checkout_session_id/complete")
      .setPath(SessionPath)
      .setHeaders(ApiHeaders)
      .setPayload(CheckoutSessionCompleteRequest)
      .addSuccess(CheckoutSessionWithOrder)
      .addError(PaymentRequiredWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/checkout_sessions/:checkout_session_id/cancel")
      .setPath(SessionPath)
      .setHeaders(ApiHeaders)
      .addSuccess(CheckoutSession)
      .addError(NotFoundWire)
      .addError(MethodNotAllowedWire)
      .addError(ConflictWire)
  )
  // The last added runs first: Authorization, then API-Version, then the request signature.
  .middleware(RequestSignature)
  .middleware(ApiVersion)
  .middleware(Authorization)
  .annotate(Idempotent, true)
  .annotate(OpenApi.Description, "Checkout Session API (merchant)")
{}

export const CheckoutApi = featureApi(CheckoutGroup)
