/**
 * The agent platform's side of a Stripe payment, for the scripts: a shared payment granted token
 * made with Stripe's test helper (`POST /v1/test_helpers/shared_payment/granted_tokens`, test mode
 * only), through the SDK pointed at `STRIPE_API_BASE` (Stripe itself, or `npm run stripe:fake`).
 * The SDK has no resource for shared payment tokens yet, so the call is its `rawRequest`.
 */
import Stripe from "stripe"

export interface StripeTarget {
  readonly secretKey: string
  /** `STRIPE_API_BASE` split as the SDK takes it. */
  readonly host: string
  readonly port: number
  readonly protocol: "http" | "https"
}

/** From STRIPE_SECRET_KEY and STRIPE_API_BASE (default Stripe's own API); undefined without a key. */
export const stripeTargetFromEnv = (): StripeTarget | undefined => {
  const secretKey = process.env["STRIPE_SECRET_KEY"]
  if (secretKey === undefined || secretKey === "") return undefined
  const base = new URL(process.env["STRIPE_API_BASE"] ?? "https://api.stripe.com")
  const protocol = base.protocol === "http:" ? "http" : "https"
  return {
    secretKey,
    host: base.hostname.replace(/^\[|\]$/g, ""),
    port: base.port === "" ? (protocol === "https" ? 443 : 80) : Number(base.port),
    protocol
  }
}

export const stripeBaseOf = (target: StripeTarget): string =>
  `${target.protocol}://${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`

export const stripeSdk = (target: StripeTarget): Stripe =>
  new Stripe(target.secretKey, {
    host: target.host,
    port: target.port,
    protocol: target.protocol,
    maxNetworkRetries: 2,
    telemetry: false
  })

export interface GrantedToken {
  readonly id: string
}

/**
 * A token for a test PaymentMethod (`pm_card_visa` approves; Stripe's other test methods decline
 * or ask for authentication), usable up to `maxAmount` in `currency` for an hour.
 */
export const grantTestToken = async (
  sdk: Stripe,
  options: { readonly amount: number; readonly currency: string; readonly paymentMethod?: string }
): Promise<GrantedToken> => {
  const token = await sdk.rawRequest("POST", "/v1/test_helpers/shared_payment/granted_tokens", {
    payment_method: options.paymentMethod ?? "pm_card_visa",
    usage_limits: {
      currency: options.currency,
      max_amount: options.amount,
      expires_at: Math.floor(Date.now() / 1000) + 3600
    }
  })
  return { id: (token as unknown as { id: string }).id }
}

/** The PaymentIntent the merchant made for a session, found by the metadata the provider writes. */
export const paymentIntentsOf = async (sdk: Stripe, checkoutSessionId: string) => {
  const found = await sdk.paymentIntents.search({ query: `metadata['checkout_session_id']:'${checkoutSessionId}'` })
  return found.data
}
