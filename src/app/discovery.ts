/** `GET /.well-known/acp.json` (official `DiscoveryResponse`): closed objects, nothing private: anyone may read it. */
import { Schema } from "effect"
import type { CatalogSnapshot } from "../catalog/model/catalog.ts"
import { merchantExtensions } from "../checkout/session/reducer.ts"
import type { AppConfigShape, Role } from "../platform/config.ts"
import { CurrencyCode, optional } from "../shared/schema-helpers.ts"

const VersionDate = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)).annotations({
  description: "An API version, YYYY-MM-DD"
})
const Uri = Schema.String.annotations({ jsonSchema: { format: "uri" } })

export const DiscoveryService = Schema.Literal("checkout", "orders", "delegate_payment", "carts")
export type DiscoveryService = typeof DiscoveryService.Type
export const InterventionType = Schema.Literal("3ds", "biometric", "address_verification")
export type InterventionType = typeof InterventionType.Type

export const DiscoveryProtocol = Schema.Struct({
  name: Schema.Literal("acp"),
  version: VersionDate.annotations({ description: "The newest API version served" }),
  supported_versions: Schema.NonEmptyArray(VersionDate).annotations({
    description: "Every API version served, oldest first; the last is `version`"
  }),
  documentation_url: optional(Uri)
}).annotations({ identifier: "DiscoveryProtocol" })

export const DiscoveryExtension = Schema.Struct({
  name: Schema.String,
  spec: optional(Uri),
  schema: optional(Uri)
}).annotations({ identifier: "DiscoveryExtension" })

export const DiscoveryCapabilities = Schema.Struct({
  services: Schema.Array(DiscoveryService),
  extensions: optional(Schema.Array(DiscoveryExtension)),
  intervention_types: optional(Schema.Array(InterventionType)),
  supported_currencies: optional(Schema.Array(CurrencyCode)),
  supported_locales: optional(Schema.Array(Schema.String))
}).annotations({ identifier: "DiscoveryCapabilities" })

export const DiscoveryResponse = Schema.Struct({
  protocol: DiscoveryProtocol,
  api_base_url: Uri.annotations({ description: "Resource paths are appended to it, e.g. /checkout_sessions" }),
  transports: Schema.Array(Schema.Literal("rest", "mcp")),
  capabilities: DiscoveryCapabilities
}).annotations({ identifier: "DiscoveryResponse" })
export type DiscoveryResponse = typeof DiscoveryResponse.Type

/** Webhook roles serve no seller API; the enum has no value for Delegate Authentication (a provider's API). */
const SERVICES_OF_ROLE: Record<Role, ReadonlyArray<DiscoveryService>> = {
  checkout: ["checkout", "orders"],
  delegate: ["delegate_payment"],
  delegate_authentication: [],
  // A transport of the checkout service (`transports`), not a service of its own.
  mcp: [],
  webhook_receiver: [],
  webhook_sender: []
}

/** The Cart API comes with the checkout role, in the one version that defines it. */
export const CARTS_VERSION = "2026-04-17"

export const servicesOf = (
  roles: ReadonlySet<Role>,
  apiVersions: ReadonlyArray<string> = []
): ReadonlyArray<DiscoveryService> => {
  const served = new Set([...roles].flatMap((role) => SERVICES_OF_ROLE[role]))
  if (roles.has("checkout") && apiVersions.includes(CARTS_VERSION)) served.add("carts")
  return DiscoveryService.literals.filter((service) => served.has(service))
}

/** The roles that make a process an ACP seller: without one of them it answers 404 (no ACP here). */
export const SELLER_ROLES: ReadonlyArray<Role> = (Object.keys(SERVICES_OF_ROLE) as Array<Role>).filter(
  (role) => SERVICES_OF_ROLE[role].length > 0
)

const isInterventionType = Schema.is(InterventionType)

/** We answer in English only (`Content-Language: en` on every response). */
const LOCALES = ["en"]

/** The extensions a session declares before an agent narrows them, without `extends`. */
const extensionsOf = (catalog: CatalogSnapshot) =>
  merchantExtensions(catalog).map(({ name, schema, spec }) => ({
    name,
    ...(spec === undefined ? {} : { spec }),
    ...(schema === undefined ? {} : { schema })
  }))

/** Intervention types outside the official enum are left out rather than advertised. */
export const discoveryDocument = (config: AppConfigShape, catalog: CatalogSnapshot): DiscoveryResponse => {
  const versions = [...config.apiVersions].sort()
  // Never empty: API_VERSIONS refuses an empty list.
  const supported: readonly [string, ...Array<string>] = [versions[0]!, ...versions.slice(1)]
  const extensions = extensionsOf(catalog)
  const interventions = [...new Set(catalog.interventions?.supported ?? [])].filter(isInterventionType)
  return {
    protocol: {
      name: "acp",
      version: versions[versions.length - 1]!,
      supported_versions: supported,
      documentation_url: `${config.publicBaseUrl}/docs`
    },
    api_base_url: config.publicBaseUrl,
    transports: config.roles.has("mcp") ? ["rest", "mcp"] : ["rest"],
    capabilities: {
      services: servicesOf(config.roles, config.apiVersions),
      ...(extensions.length === 0 ? {} : { extensions }),
      ...(interventions.length === 0 ? {} : { intervention_types: interventions }),
      supported_currencies: [catalog.currency],
      supported_locales: LOCALES
    }
  }
}
