/**
 * The UCP REST checkout (`/ucp/checkout-sessions`), agent keys only: bodies are read and decoded by
 * the handlers in the version the agent's profile declares. Its errors leave here in the common
 * envelope and are given UCP's shape at the edge (`error-shape.ts`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ConflictWire, NotFoundWire, UnprocessableWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { Idempotent, RequiredIdempotencyKey } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization } from "../../platform/http/security.ts"
import { optional } from "../../shared/schema-helpers.ts"
import { StorableString } from "../../shared/storable-text.ts"

/** The REST endpoint the business profile names: the release's paths are appended to it. */
export const UCP_REST_PATH = "/ucp"
export const UCP_CHECKOUT_PATH = `${UCP_REST_PATH}/checkout-sessions`

const Headers = Schema.Struct({
  "ucp-agent": Schema.String.annotations({ description: "profile=\"<the platform's profile URL>\" (RFC 8941)" }),
  "idempotency-key": optional(Schema.String.annotations({ description: "Required on POST and PUT" })),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" }))
})

const SessionPath = Schema.Struct({ id: StorableString })
const Body = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Answer = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export class UcpCheckoutGroup extends HttpApiGroup.make("ucpCheckout")
  .add(
    HttpApiEndpoint.post("create", UCP_CHECKOUT_PATH)
      .setHeaders(Headers)
      .setPayload(Body)
      .addSuccess(Answer, { status: 201 })
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .annotate(OpenApi.Summary, "Create a checkout session (UCP)")
  )
  .add(
    HttpApiEndpoint.get("get", `${UCP_CHECKOUT_PATH}/:id`)
      .setPath(SessionPath)
      .setHeaders(Headers)
      .addSuccess(Answer)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .annotate(OpenApi.Summary, "Get a checkout session (UCP)")
  )
  .add(
    HttpApiEndpoint.put("update", `${UCP_CHECKOUT_PATH}/:id`)
      .setPath(SessionPath)
      .setHeaders(Headers)
      .setPayload(Body)
      .addSuccess(Answer)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .annotate(OpenApi.Summary, "Replace a checkout session's editable fields (UCP)")
  )
  .add(
    HttpApiEndpoint.post("complete", `${UCP_CHECKOUT_PATH}/:id/complete`)
      .setPath(SessionPath)
      .setHeaders(Headers)
      .setPayload(Body)
      .addSuccess(Answer)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .annotate(OpenApi.Summary, "Pay and place the order (UCP)")
  )
  .add(
    HttpApiEndpoint.post("cancel", `${UCP_CHECKOUT_PATH}/:id/cancel`)
      .setPath(SessionPath)
      .setHeaders(Headers)
      .setPayload(Body)
      .addSuccess(Answer)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(UnprocessableWire)
      .annotate(OpenApi.Summary, "Cancel a checkout session (UCP)")
  )
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
  .annotate(RequiredIdempotencyKey, true)
  .annotate(OpenApi.Description, "Universal Commerce Protocol checkout (REST binding)")
{}

export const UcpCheckoutApi = featureApi(UcpCheckoutGroup)
