/** The capabilities of UCP 2026-04-08 this merchant serves, and which of a negotiated set change the checkout. */

export const UCP_VERSION = "2026-04-08"

export const CHECKOUT = "dev.ucp.shopping.checkout"
export const FULFILLMENT = "dev.ucp.shopping.fulfillment"
export const DISCOUNT = "dev.ucp.shopping.discount"
export const BUYER_CONSENT = "dev.ucp.shopping.buyer_consent"
export const ORDER = "dev.ucp.shopping.order"

const spec = (page: string) => `https://ucp.dev/${UCP_VERSION}/specification/${page}`
const schema = (file: string) => `https://ucp.dev/${UCP_VERSION}/schemas/shopping/${file}`

export interface ServedCapability {
  readonly name: string
  readonly version: string
  readonly spec: string
  readonly schema: string
  readonly extends?: string
}

/** Root capabilities first; each extension names the one it extends. */
export const SERVED_CAPABILITIES: ReadonlyArray<ServedCapability> = [
  { name: CHECKOUT, version: UCP_VERSION, spec: spec("checkout"), schema: schema("checkout.json") },
  { name: ORDER, version: UCP_VERSION, spec: spec("order"), schema: schema("order.json") },
  {
    name: FULFILLMENT,
    version: UCP_VERSION,
    spec: spec("fulfillment"),
    schema: schema("fulfillment.json"),
    extends: CHECKOUT
  },
  { name: DISCOUNT, version: UCP_VERSION, spec: spec("discount"), schema: schema("discount.json"), extends: CHECKOUT },
  {
    name: BUYER_CONSENT,
    version: UCP_VERSION,
    spec: spec("buyer-consent"),
    schema: schema("buyer_consent.json"),
    extends: CHECKOUT
  }
]

/** The checkout's extensions in force for a request: their fields are read and shown only when negotiated. */
export interface ActiveExtensions {
  readonly fulfillment: boolean
  readonly discount: boolean
  readonly buyerConsent: boolean
}

export const activeExtensions = (negotiated: ReadonlyArray<string>): ActiveExtensions => ({
  fulfillment: negotiated.includes(FULFILLMENT),
  discount: negotiated.includes(DISCOUNT),
  buyerConsent: negotiated.includes(BUYER_CONSENT)
})
