/**
 * UCP discovery: the business profile at `/.well-known/ucp` (no key: agents fetch it before they have
 * one), and the spec and schema of the vault-token payment handler it advertises.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { NotFoundWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { VAULT_HANDLER_SCHEMA_PATH, VAULT_HANDLER_SPEC_PATH } from "../wire/ucp/v2026-04-08/business-profile.ts"

export const UCP_PROFILE_PATH = "/.well-known/ucp"

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export class UcpDiscoveryGroup extends HttpApiGroup.make("ucpDiscovery", { topLevel: true })
  .add(
    HttpApiEndpoint.get("profile", UCP_PROFILE_PATH)
      .addSuccess(Json)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "The UCP business profile (public; `Cache-Control: public, max-age=3600`)")
  )
  .add(
    HttpApiEndpoint.get("vaultHandlerSpec", VAULT_HANDLER_SPEC_PATH)
      .addSuccess(Schema.String)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "The vault-token payment handler's specification (Markdown)")
  )
  .add(
    HttpApiEndpoint.get("vaultHandlerSchema", VAULT_HANDLER_SCHEMA_PATH)
      .addSuccess(Json)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "The vault-token payment handler's JSON Schema (config and credential)")
  )
  .annotate(OpenApi.Description, "Universal Commerce Protocol discovery")
{}

export const UcpDiscoveryApi = featureApi(UcpDiscoveryGroup)
