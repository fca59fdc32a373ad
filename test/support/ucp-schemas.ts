/**
 * Our transcription of UCP 2026-04-08's JSON Schemas for what the service sends: the checkout response
 * (`checkout.json` with the fulfillment, discount and buyer-consent extensions, `ucp.json`'s response
 * envelope), the error response (`types/error_response.json`) and the business profile
 * (`profile_schema.json`'s business side). Written from the release, not copied; closed
 * (`additionalProperties: false`) where the service's output is known, so a stray field fails too,
 * which is stricter than the release's open objects.
 */
import { Ajv2020 } from "ajv/dist/2020.js"

const version = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" }
const reverseDomain = { type: "string", pattern: "^[a-z][a-z0-9]*(?:\\.[a-z][a-z0-9_]*)+$" }
const amount = { type: "integer", minimum: 0 }
const signedAmount = { type: "integer" }
const uri = { type: "string", pattern: "^https?://" }

const closed = (properties: Record<string, unknown>, required: ReadonlyArray<string> = []) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false
})

const registryOf = (entry: unknown) => ({
  type: "object",
  propertyNames: reverseDomain,
  additionalProperties: { type: "array", items: entry }
})

const total = {
  type: "object",
  required: ["type", "amount"],
  properties: { type: { type: "string" }, display_text: { type: "string" }, amount: signedAmount },
  additionalProperties: false,
  allOf: [
    {
      if: { properties: { type: { enum: ["discount", "items_discount"] } } },
      then: { properties: { amount: { exclusiveMaximum: 0 } } }
    },
    {
      if: { properties: { type: { enum: ["subtotal", "fulfillment", "tax", "fee"] } } },
      then: { properties: { amount: { minimum: 0 } } }
    },
    {
      if: {
        properties: {
          type: { not: { enum: ["subtotal", "items_discount", "discount", "fulfillment", "tax", "fee", "total"] } }
        }
      },
      then: { required: ["display_text"] }
    }
  ]
}

/** Exactly one subtotal and one total (the release's `totals.json`). */
const totals = {
  type: "array",
  items: total,
  allOf: [
    { contains: { properties: { type: { const: "subtotal" } } }, minContains: 1, maxContains: 1 },
    { contains: { properties: { type: { const: "total" } } }, minContains: 1, maxContains: 1 }
  ]
}

const message = {
  oneOf: [
    closed({
      type: { const: "error" },
      code: { type: "string" },
      path: { type: "string" },
      content_type: { enum: ["plain", "markdown"] },
      content: { type: "string" },
      severity: { enum: ["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"] }
    }, ["type", "code", "content", "severity"]),
    closed({
      type: { const: "warning" },
      path: { type: "string" },
      code: { type: "string" },
      content: { type: "string" },
      content_type: { enum: ["plain", "markdown"] },
      presentation: { type: "string" },
      image_url: uri,
      url: uri
    }, ["type", "code", "content"]),
    closed({
      type: { const: "info" },
      path: { type: "string" },
      code: { type: "string" },
      content_type: { enum: ["plain", "markdown"] },
      content: { type: "string" }
    }, ["type", "content"])
  ]
}

const postalAddress = {
  extended_address: { type: "string" },
  street_address: { type: "string" },
  address_locality: { type: "string" },
  address_region: { type: "string" },
  address_country: { type: "string" },
  postal_code: { type: "string" },
  first_name: { type: "string" },
  last_name: { type: "string" },
  phone_number: { type: "string" }
}

const responseCapabilities = registryOf(closed({ version, spec: uri, schema: uri, extends: {} }, ["version"]))

const handlerEntry = {
  type: "object",
  required: ["id", "version"],
  properties: {
    id: { type: "string" },
    version,
    spec: uri,
    schema: uri,
    available_instruments: {
      type: "array",
      minItems: 1,
      items: closed({ type: { type: "string" }, constraints: { type: "object" } }, ["type"])
    },
    config: { type: "object" }
  },
  additionalProperties: false
}

const option = closed({
  id: { type: "string" },
  title: { type: "string" },
  description: { type: "string" },
  carrier: { type: "string" },
  earliest_fulfillment_time: { type: "string" },
  latest_fulfillment_time: { type: "string" },
  totals: { type: "array", items: total }
}, ["id", "title", "totals"])

const fulfillment = closed({
  methods: {
    type: "array",
    items: closed({
      id: { type: "string" },
      type: { enum: ["shipping", "pickup"] },
      line_item_ids: { type: "array", items: { type: "string" } },
      destinations: { type: "array", items: closed({ id: { type: "string" }, ...postalAddress }, ["id"]) },
      selected_destination_id: { type: ["string", "null"] },
      groups: {
        type: "array",
        items: closed({
          id: { type: "string" },
          line_item_ids: { type: "array", items: { type: "string" } },
          options: { type: "array", items: option },
          selected_option_id: { type: ["string", "null"] }
        }, ["id", "line_item_ids"])
      }
    }, ["id", "type", "line_item_ids"])
  },
  available_methods: {
    type: "array",
    items: closed({
      type: { enum: ["shipping", "pickup"] },
      line_item_ids: { type: "array", items: { type: "string" } },
      fulfillable_on: { type: ["string", "null"] },
      description: { type: "string" }
    }, ["type", "line_item_ids"])
  }
})

const discounts = closed({
  codes: { type: "array", items: { type: "string" } },
  applied: {
    type: "array",
    items: closed({
      code: { type: "string" },
      title: { type: "string" },
      amount,
      automatic: { type: "boolean" },
      method: { enum: ["each", "across"] },
      priority: { type: "integer", minimum: 1 },
      provisional: { type: "boolean" },
      eligibility: reverseDomain,
      allocations: { type: "array", items: closed({ path: { type: "string" }, amount }, ["path", "amount"]) }
    }, ["title", "amount"])
  }
})

export const checkoutResponse = closed({
  ucp: closed({
    version,
    status: { const: "success" },
    capabilities: responseCapabilities,
    payment_handlers: registryOf(handlerEntry)
  }, ["version", "payment_handlers"]),
  id: { type: "string" },
  line_items: {
    type: "array",
    items: closed({
      id: { type: "string" },
      item: closed({ id: { type: "string" }, title: { type: "string" }, price: amount, image_url: uri }, [
        "id",
        "title",
        "price"
      ]),
      quantity: { type: "integer", minimum: 1 },
      totals,
      parent_id: { type: "string" }
    }, ["id", "item", "quantity", "totals"])
  },
  buyer: closed({
    first_name: { type: "string" },
    last_name: { type: "string" },
    email: { type: "string" },
    phone_number: { type: "string" },
    consent: closed({
      analytics: { type: "boolean" },
      preferences: { type: "boolean" },
      marketing: { type: "boolean" },
      sale_of_data: { type: "boolean" }
    })
  }),
  context: { type: "object" },
  signals: { type: "object" },
  attribution: { type: "object", additionalProperties: { type: "string" } },
  status: {
    enum: ["incomplete", "requires_escalation", "ready_for_complete", "complete_in_progress", "completed", "canceled"]
  },
  currency: { type: "string", pattern: "^[A-Z]{3}$" },
  totals,
  messages: { type: "array", items: message },
  links: {
    type: "array",
    items: closed({ type: { type: "string" }, url: uri, title: { type: "string" } }, ["type", "url"])
  },
  expires_at: { type: "string" },
  continue_url: uri,
  payment: closed({
    instruments: { type: "array", items: { type: "object", required: ["id", "handler_id", "type"] } }
  }),
  order: closed({ id: { type: "string" }, label: { type: "string" }, permalink_url: uri }, ["id", "permalink_url"]),
  fulfillment,
  discounts
}, ["ucp", "id", "line_items", "status", "currency", "totals", "links"])

export const errorResponse = closed({
  ucp: closed({ version, status: { const: "error" }, capabilities: responseCapabilities }, ["version", "status"]),
  messages: { type: "array", minItems: 1, items: message },
  continue_url: uri
}, ["ucp", "messages"])

export const businessProfile = closed({
  ucp: closed({
    version,
    services: registryOf(closed({
      version,
      spec: uri,
      transport: { enum: ["rest", "mcp", "a2a", "embedded"] },
      endpoint: uri,
      schema: uri
    }, ["version", "spec", "transport", "endpoint"])),
    capabilities: registryOf(
      closed({ version, spec: uri, schema: uri, extends: reverseDomain }, ["version", "spec", "schema"])
    ),
    payment_handlers: registryOf(handlerEntry),
    supported_versions: { type: "object", additionalProperties: uri }
  }, ["version", "services", "capabilities", "payment_handlers"]),
  signing_keys: {
    type: "array",
    items: closed({
      kid: { type: "string" },
      kty: { const: "EC" },
      crv: { enum: ["P-256", "P-384"] },
      x: { type: "string" },
      y: { type: "string" },
      use: { const: "sig" },
      alg: { enum: ["ES256", "ES384"] }
    }, ["kid", "kty", "crv", "x", "y"])
  }
}, ["ucp", "signing_keys"])

const ajv = new Ajv2020({
  strict: true,
  strictTypes: false,
  strictRequired: false,
  allErrors: true,
  allowUnionTypes: true
})
const validators = {
  checkout: ajv.compile(checkoutResponse),
  error: ajv.compile(errorResponse),
  profile: ajv.compile(businessProfile)
}

/** Throws with the schema's complaints unless `body` is a valid `kind`. */
export const assertUcp = (kind: keyof typeof validators, body: unknown, what: string) => {
  const validate = validators[kind]
  if (!validate(body)) throw new Error(`${what}: not a UCP ${kind} body:\n${ajv.errorsText(validate.errors)}`)
}

/** Every 200/201 of the UCP checkout: a checkout, or (`ucp.status` error) an outcome without a resource. */
export const checkUcpResponse = (method: string, route: string, status: number, body: any) => {
  if (status !== 200 && status !== 201) return
  if (route === "/.well-known/ucp") return assertUcp("profile", body, `${method} ${route}`)
  if (!/^\/ucp\/checkout-sessions(\/[^/]+(\/(complete|cancel))?)?$/.test(route)) return
  assertUcp(body?.ucp?.status === "error" ? "error" : "checkout", body, `${method} ${route}`)
}
