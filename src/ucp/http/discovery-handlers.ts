/**
 * `/.well-known/ucp`: built once per process (the profile changes only with the configuration and the
 * catalog file's payment handlers), served with a public cache of an hour (the release asks at least
 * 60 s, never `private`, `no-store` or `no-cache`), never redirected. Only a process serving checkout
 * has a profile: elsewhere the route is not found.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { AppConfig } from "../../platform/config.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { requireRole } from "../../platform/http/route-guards.ts"
import { UcpSigningKeys } from "../signing-keys.ts"
import {
  businessProfile,
  VAULT_HANDLER_SCHEMA_PATH,
  vaultHandlerName
} from "../wire/ucp/v2026-04-08/business-profile.ts"
import { vaultHandlerSchema, vaultHandlerSpec } from "../wire/ucp/v2026-04-08/vault-handler.ts"
import { UCP_REST_PATH } from "./api.ts"
import { UcpDiscoveryApi } from "./discovery-api.ts"

export const UCP_PROFILE_CACHE_CONTROL = "public, max-age=3600"

export const UcpDiscoveryHandlers = groupHandlers(
  UcpDiscoveryApi,
  "ucpDiscovery",
  Effect.fnUntraced(function*(handlers) {
    const config = yield* AppConfig
    const keys = yield* UcpSigningKeys
    const catalog = (yield* Catalog).latest()
    const base = config.publicBaseUrl.replace(/\/$/, "")
    const gate = requireRole(config, "checkout")
    const cached = { "cache-control": UCP_PROFILE_CACHE_CONTROL }
    const profile = HttpServerResponse.unsafeJson(
      businessProfile({
        publicBaseUrl: base,
        merchantId: config.merchantId,
        production: config.production,
        handlers: catalog.paymentHandlers,
        signingKeys: keys.published,
        restEndpoint: `${base}${UCP_REST_PATH}`
      }),
      { headers: cached }
    )
    const spec = HttpServerResponse.text(
      vaultHandlerSpec(vaultHandlerName(base), `${base}/agentic_commerce/delegate_payment`),
      { contentType: "text/markdown; charset=utf-8", headers: cached }
    )
    const schema = HttpServerResponse.unsafeJson(vaultHandlerSchema(`${base}${VAULT_HANDLER_SCHEMA_PATH}`), {
      headers: cached
    })
    return handlers
      .handleRaw("profile", () => Effect.as(gate, profile))
      .handleRaw("vaultHandlerSpec", () => Effect.as(gate, spec))
      .handleRaw("vaultHandlerSchema", () => Effect.as(gate, schema))
  })
)
