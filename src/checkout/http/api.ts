/** The checkout routes; each version's group documents its bodies, the schemas the handlers decode with. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiHeaders } from "../../platform/http/api-headers.ts"
import {
  ConflictWire,
  MethodNotAllowedWire,
  NotFoundWire,
  PaymentRequiredWire,
  TooManyRequestsWire,
  UnprocessableWire
} from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { RequestSignature } from "../../platform/http/request-signature.ts"
import { Idempotent, VersionedIdempotency } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion } from "../../platform/http/security.ts"
import { type ApiVersionName, NEWEST_API_VERSION } from "../../shared/api-versions.ts"
import { StorableString } from "../../shared/storable-text.ts"
import { checkoutCodecs } from "../wire/acp/versions.ts"

const SessionPath = Schema.Struct({ checkout_session_id: StorableString })

export const checkoutGroupFor = (version: ApiVersionName) => {
  const codec = checkoutCodecs[version]
  // A version without a cancel body documents none (one sent is checked as any body, then ignored).
  const cancelBody: Schema.Schema.AnyNoContext = codec.cancel?.schema ?? Schema.Void
  return HttpApiGroup.make("checkout")
    .add(
      HttpApiEndpoint.post("create", "/checkout_sessions")
        .setHeaders(ApiHeaders)
        .setPayload(codec.create.schema)
        .addSuccess(codec.session.schema, { status: 201 })
        .addError(UnprocessableWire)
        .addError(ConflictWire)
        .addError(TooManyRequestsWire)
    )
    .add(
      HttpApiEndpoint.get("get", "/checkout_sessions/:checkout_session_id")
        .setPath(SessionPath)
        .setHeaders(ApiHeaders)
        .addSuccess(codec.session.schema)
        .addError(NotFoundWire)
    )
    .add(
      HttpApiEndpoint.post("update", "/checkout_sessions/:checkout_session_id")
        .setPath(SessionPath)
        .setHeaders(ApiHeaders)
        .setPayload(codec.update.schema)
        .addSuccess(codec.session.schema)
        .addError(NotFoundWire)
        .addError(ConflictWire)
        .addError(UnprocessableWire)
        .addError(TooManyRequestsWire)
    )
    .add(
      HttpApiEndpoint.post("complete", "/checkout_sessions/:checkout_session_id/complete")
        .setPath(SessionPath)
        .setHeaders(ApiHeaders)
        .setPayload(codec.complete.schema)
        .addSuccess(codec.completeResponse)
        .addError(PaymentRequiredWire)
        .addError(NotFoundWire)
        .addError(ConflictWire)
        .addError(UnprocessableWire)
    )
    .add(
      HttpApiEndpoint.post("cancel", "/checkout_sessions/:checkout_session_id/cancel")
        .setPath(SessionPath)
        .setHeaders(ApiHeaders)
        .setPayload(cancelBody)
        .addSuccess(codec.session.schema)
        .addError(NotFoundWire)
        .addError(MethodNotAllowedWire)
        .addError(ConflictWire)
    )
    // The last added runs first: the agent key, then API-Version, then the request signature.
    .middleware(RequestSignature)
    .middleware(ApiVersion)
    .middleware(AgentAuthorization)
    .annotate(Idempotent, true)
    .annotate(VersionedIdempotency, true)
    .annotate(OpenApi.Description, `Checkout Session API (merchant), ACP ${version}`)
}

/** The group the server runs: its handlers read bodies by version, so any version's group serves. */
export const CheckoutGroup = checkoutGroupFor(NEWEST_API_VERSION)

export const CheckoutApi = featureApi(CheckoutGroup)
