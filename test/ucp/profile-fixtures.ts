/** Platform profiles of UCP 2026-04-08 for the tests: one that uses every part of the schema, and its parts. */

export const V = "2026-04-08"

/** A P-256 public key (coordinates of 32 bytes each, base64url). */
export const ecKey = (kid = "platform_2026") => ({
  kid,
  kty: "EC",
  crv: "P-256",
  x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
  y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
  use: "sig",
  alg: "ES256"
})

export const capability = (name: string, extra: Record<string, unknown> = {}) => ({
  version: V,
  spec: `https://ucp.dev/${V}/specification/${name}`,
  schema: `https://ucp.dev/${V}/schemas/shopping/${name}.json`,
  ...extra
})

export const WEBHOOK_URL = "https://platform.example/webhooks/ucp/orders"

/** A platform profile as a JSON value; `ucp` fields are merged over the defaults. */
export const platformProfile = (ucp: Record<string, unknown> = {}, top: Record<string, unknown> = {}) => ({
  ucp: {
    version: V,
    services: {
      "dev.ucp.shopping": [
        {
          version: V,
          spec: `https://ucp.dev/${V}/specification/overview`,
          transport: "rest",
          schema: `https://ucp.dev/${V}/services/shopping/rest.openapi.json`
        },
        {
          version: V,
          spec: `https://ucp.dev/${V}/specification/overview`,
          transport: "a2a",
          endpoint: "https://platform.example/.well-known/agent-card.json"
        }
      ]
    },
    capabilities: {
      "dev.ucp.shopping.checkout": [capability("checkout")],
      "dev.ucp.shopping.fulfillment": [capability("fulfillment", { extends: "dev.ucp.shopping.checkout" })],
      "dev.ucp.shopping.discount": [
        capability("discount", { extends: ["dev.ucp.shopping.checkout", "dev.ucp.shopping.cart"] })
      ],
      "dev.ucp.shopping.order": [capability("order", { config: { webhook_url: WEBHOOK_URL, batch: true } })]
    },
    payment_handlers: {
      "com.example.processor_tokenizer": [
        {
          id: "processor_tokenizer",
          version: V,
          spec: "https://example.com/specs/payments/processor_tokenizer",
          schema: "https://example.com/schemas/payments/processor_tokenizer.json",
          available_instruments: [{ type: "card", constraints: { brands: ["visa", "mastercard"] } }],
          config: { environment: "test", nested: { deep: [1, 2, 3] } }
        }
      ]
    },
    ...ucp
  },
  signing_keys: [ecKey()],
  ...top
})
