/**
 * This business as UCP 2026-04-08 describes it: the profile at `/.well-known/ucp` (the shopping service
 * over REST, the capabilities served, the payment handlers, the public signing keys) and the payment
 * handlers a checkout response offers. The card vault's `vt_` tokens are a processor-tokenizer handler
 * of this business's own namespace, its spec a page this service serves.
 */
import type { PaymentHandler } from "../../../../catalog/model/catalog.ts"
import { SERVED_CAPABILITIES, UCP_VERSION } from "./extensions.ts"

/** What the catalog's handler settles through: only the vault's tokens are UCP token credentials here. */
const VAULT_PSP = "acp_vault"

export const VAULT_HANDLER_SPEC_PATH = "/ucp/handlers/vault_token"
export const VAULT_HANDLER_SCHEMA_PATH = `${VAULT_HANDLER_SPEC_PATH}/schema.json`

/**
 * The business's reverse-domain authority from its public URL (`shop.example.com` → `com.example.shop`);
 * a host that is no domain name (an IP address, `localhost`) gets `localhost.merchant`.
 */
export const namespaceOf = (publicBaseUrl: string): string => {
  const host = new URL(publicBaseUrl).hostname.toLowerCase()
  const labels = host.split(".")
  const named = labels.length >= 2 && labels.every((label) => /^[a-z][a-z0-9]*$/.test(label))
  return named ? [...labels].reverse().join(".") : "localhost.merchant"
}

export const vaultHandlerName = (publicBaseUrl: string) => `${namespaceOf(publicBaseUrl)}.payments.vault_token`

export interface HandlerContext {
  readonly publicBaseUrl: string
  readonly merchantId: string
  readonly production: boolean
}

const brandsOf = (handler: PaymentHandler): ReadonlyArray<string> => {
  const brands = handler.config["accepted_brands"]
  return Array.isArray(brands) ? brands.filter((brand): brand is string => typeof brand === "string") : []
}

/** The catalog's vault handlers as UCP payment handlers, by name (the handler `id` is the catalog's). */
export const paymentHandlers = (
  handlers: ReadonlyArray<PaymentHandler>,
  context: HandlerContext
): Readonly<Record<string, ReadonlyArray<Record<string, unknown>>>> => {
  const vault = handlers.filter((handler) => handler.psp === VAULT_PSP)
  if (vault.length === 0) return {}
  const base = context.publicBaseUrl.replace(/\/$/, "")
  return {
    [vaultHandlerName(base)]: vault.map((handler) => ({
      id: handler.id,
      version: UCP_VERSION,
      spec: `${base}${VAULT_HANDLER_SPEC_PATH}`,
      schema: `${base}${VAULT_HANDLER_SCHEMA_PATH}`,
      available_instruments: [{ type: "card", constraints: { brands: brandsOf(handler) } }],
      config: {
        environment: context.production ? "production" : "sandbox",
        business_id: context.merchantId,
        tokenize_url: `${base}/agentic_commerce/delegate_payment`
      }
    }))
  }
}

export interface BusinessProfileInput extends HandlerContext {
  readonly handlers: ReadonlyArray<PaymentHandler>
  /** The public JWKs agents check our signatures with (order webhooks), every key still published. */
  readonly signingKeys: ReadonlyArray<Record<string, unknown>>
  readonly restEndpoint: string
}

export const businessProfile = (input: BusinessProfileInput) => ({
  ucp: {
    version: UCP_VERSION,
    services: {
      "dev.ucp.shopping": [{
        version: UCP_VERSION,
        spec: `https://ucp.dev/${UCP_VERSION}/specification/overview`,
        transport: "rest",
        endpoint: input.restEndpoint,
        schema: `https://ucp.dev/${UCP_VERSION}/services/shopping/rest.openapi.json`
      }]
    },
    capabilities: Object.fromEntries(
      SERVED_CAPABILITIES.map((capability) => [capability.name, [{
        version: capability.version,
        spec: capability.spec,
        schema: capability.schema,
        ...(capability.extends === undefined ? {} : { extends: capability.extends })
      }]])
    ),
    payment_handlers: paymentHandlers(input.handlers, input)
  },
  signing_keys: input.signingKeys
})
