/** The Cart API routes (ACP 2026-04-17), agent keys only; bodies are read and decoded by the handlers. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiHeaders } from "../../platform/http/api-headers.ts"
import { ConflictWire, NotFoundWire, UnprocessableWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { RequestSignature } from "../../platform/http/request-signature.ts"
import { Idempotent, VersionedIdempotency } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion } from "../../platform/http/security.ts"
import { StorableString } from "../../shared/storable-text.ts"
import { CART_API_VERSION, CartCreateRequest, CartUpdateRequest, CartWire } from "./cart-wire.ts"

export const CARTS_PATH = "/carts"

const CartPath = Schema.Struct({ id: StorableString })

export class CartsGroup extends HttpApiGroup.make("carts")
  .add(
    HttpApiEndpoint.post("create", CARTS_PATH)
      .setHeaders(ApiHeaders)
      .setPayload(CartCreateRequest)
      .addSuccess(CartWire, { status: 201 })
      .addError(UnprocessableWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Create a cart (estimated totals; holds no stock)")
  )
  .add(
    HttpApiEndpoint.get("get", `${CARTS_PATH}/:id`)
      .setPath(CartPath)
      .setHeaders(ApiHeaders)
      .addSuccess(CartWire)
      .addError(NotFoundWire)
      .annotate(OpenApi.Summary, "Get a cart (404 when unknown, expired or canceled)")
  )
  .add(
    HttpApiEndpoint.put("update", `${CARTS_PATH}/:id`)
      .setPath(CartPath)
      .setHeaders(ApiHeaders)
      .setPayload(CartUpdateRequest)
      .addSuccess(CartWire)
      .addError(NotFoundWire)
      .addError(UnprocessableWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Replace a cart's items and buyer (the last write wins); refreshes expires_at")
  )
  .add(
    HttpApiEndpoint.post("cancel", `${CARTS_PATH}/:id/cancel`)
      .setPath(CartPath)
      .setHeaders(ApiHeaders)
      .setPayload(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      .addSuccess(CartWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Cancel a cart: answers its last state; it is then gone (404)")
  )
  // The last added runs first: the agent key, then API-Version, then the request signature.
  .middleware(RequestSignature)
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
  .annotate(VersionedIdempotency, true)
  .annotate(OpenApi.Description, `Cart API (merchant), ACP ${CART_API_VERSION} only`)
{}

export const CartsApi = featureApi(CartsGroup)
