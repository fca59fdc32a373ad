/** The Stripe account's settings (`docs/payments.md`, "Stripe"), read from the environment; keys kept `Redacted`. */
import { Config, Option, Redacted } from "effect"

export interface StripeConfig {
  /** `STRIPE_SECRET_KEY`: none leaves Stripe off (its handler is not offered). */
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  /** `STRIPE_WEBHOOK_SECRET`: the signing secret of the endpoint `POST /stripe/webhooks`. */
  readonly webhookSecret: Option.Option<Redacted.Redacted<string>>
  /** `STRIPE_API_BASE`, split as the SDK takes it: a scheme, a host and a port, no path. */
  readonly apiBase: { readonly protocol: "http" | "https"; readonly host: string; readonly port: number }
  /**
   * `STRIPE_THREE_D_SECURE_IMPORT`: the account imports 3-D Secure results authenticated outside Stripe (a
   * feature Stripe enables per account), so an agent's result can pay; off, a card whose issuer asks is declined.
   */
  readonly threeDSecureImport: boolean
}

export const STRIPE_API_BASE_DEFAULT = "https://api.stripe.com"

/** `scheme://host[:port]` with at most a trailing `/`: the SDK sends every request under `/v1/` of the host. */
export const parseStripeApiBase = (raw: string): StripeConfig["apiBase"] | undefined => {
  const match = /^(https?):\/\/([^/:\s?#@]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?\/?$/.exec(raw.trim())
  if (match === null) return undefined
  const protocol = match[1] as "http" | "https"
  const port = match[3] === undefined ? (protocol === "https" ? 443 : 80) : Number(match[3])
  if (port < 1 || port > 65535) return undefined
  return { protocol, host: match[2]!.replace(/^\[|\]$/g, ""), port }
}

/** The `STRIPE_*` variables, each checked as it is read. */
export const stripeConfig: Config.Config<StripeConfig> = Config.all({
  secretKey: Config.option(
    Config.string("STRIPE_SECRET_KEY").pipe(
      Config.validate({
        message: "Expected a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_live_…, rk_test_…)",
        validation: (key) => /^(sk|rk)_(live|test)_[A-Za-z0-9_]+$/.test(key)
      })
    )
  ),
  webhookSecret: Config.option(
    Config.string("STRIPE_WEBHOOK_SECRET").pipe(
      Config.validate({
        message: "Expected a webhook signing secret (whsec_…)",
        validation: (s) => /^whsec_\S+$/.test(s)
      })
    )
  ),
  apiBase: Config.string("STRIPE_API_BASE").pipe(
    Config.validate({
      message: "Expected http(s)://host[:port] with no path (the SDK sends its requests under /v1/)",
      validation: (raw) => parseStripeApiBase(raw) !== undefined
    }),
    Config.withDefault(STRIPE_API_BASE_DEFAULT)
  ),
  threeDSecureImport: Config.boolean("STRIPE_THREE_D_SECURE_IMPORT").pipe(Config.withDefault(false))
}).pipe(
  Config.map((env) => ({
    secretKey: Option.map(env.secretKey, (key) => Redacted.make(key)),
    webhookSecret: Option.map(env.webhookSecret, (secret) => Redacted.make(secret)),
    apiBase: parseStripeApiBase(env.apiBase)!,
    threeDSecureImport: env.threeDSecureImport
  }))
)
