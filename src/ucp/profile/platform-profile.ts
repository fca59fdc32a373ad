/**
 * A UCP platform profile as this service uses it, whatever release it was read in: the party's
 * protocol version, its services, capabilities and payment handlers by reverse-domain name, and the
 * public keys its signatures are checked with. The wire schemas (`wire/ucp/`) decode into this shape.
 */
import { Option } from "effect"

/** `dev.ucp.shopping.checkout`: the root of checkout operations. */
export const CHECKOUT_CAPABILITY = "dev.ucp.shopping.checkout"
/** `dev.ucp.shopping.cart`: the root of cart operations. */
export const CART_CAPABILITY = "dev.ucp.shopping.cart"
/** `dev.ucp.shopping.order`: the root of order webhooks; its platform `config.webhook_url` is where they go. */
export const ORDER_CAPABILITY = "dev.ucp.shopping.order"

/** Open objects (`additionalProperties: true`): every key kept as sent. */
export type OpenObject = Readonly<Record<string, unknown>>

export interface ServiceEntry {
  readonly version: string
  readonly spec: string
  readonly transport: "rest" | "mcp" | "a2a" | "embedded"
  /** Present for every transport but `a2a`. */
  readonly schema?: string
  readonly endpoint?: string
  readonly id?: string
  readonly config?: OpenObject
}

export interface CapabilityEntry {
  readonly version: string
  readonly spec: string
  readonly schema: string
  readonly id?: string
  /** The parent capability, or at least one of several: present for extensions only. */
  readonly extends?: string | ReadonlyArray<string>
  /** Checked as `{ webhook_url }` for the order capability; open for every other one. */
  readonly config?: OpenObject
}

export interface AvailableInstrument {
  readonly type: string
  readonly constraints?: OpenObject
}

export interface PaymentHandlerEntry {
  readonly id: string
  readonly version: string
  readonly spec: string
  readonly schema: string
  readonly available_instruments?: ReadonlyArray<AvailableInstrument>
  readonly config?: OpenObject
}

/** A public JWK: `kid` and `kty` always; `crv`, `x` and `y` for EC keys; private members are never kept. */
export interface SigningKey {
  readonly kid: string
  readonly kty: string
  readonly crv?: string
  readonly x?: string
  readonly y?: string
  readonly n?: string
  readonly e?: string
  readonly use?: "sig" | "enc"
  readonly alg?: string
}

export type Registry<A> = Readonly<Record<string, ReadonlyArray<A>>>

export interface PlatformProfile {
  readonly ucp: {
    readonly version: string
    readonly status?: "success" | "error"
    readonly services: Registry<ServiceEntry>
    /** Empty when the profile declares none. */
    readonly capabilities: Registry<CapabilityEntry>
    readonly payment_handlers: Registry<PaymentHandlerEntry>
  }
  /** Empty when the profile publishes none. */
  readonly signing_keys: ReadonlyArray<SigningKey>
}

/** The entries a registry holds under `name` (own keys only: a name is never looked up on the prototype). */
export const entriesOf = <A>(registry: Registry<A>, name: string): ReadonlyArray<A> =>
  Object.hasOwn(registry, name) ? registry[name]! : []

/**
 * Where the platform takes order webhooks: the order capability's `config.webhook_url`, of the entry at
 * `version` (the negotiated one) or, without a version, of the newest entry.
 */
export const orderWebhookUrl = (profile: PlatformProfile, version?: string): Option.Option<string> => {
  const entries = entriesOf(profile.ucp.capabilities, ORDER_CAPABILITY)
  const entry = version === undefined
    ? [...entries].sort((a, b) => (a.version < b.version ? 1 : a.version > b.version ? -1 : 0))[0]
    : entries.find((candidate) => candidate.version === version)
  const url = entry?.config?.webhook_url
  return typeof url === "string" ? Option.some(url) : Option.none()
}

/** The key a signature names by `kid`, if the profile publishes it. */
export const signingKey = (profile: PlatformProfile, kid: string): Option.Option<SigningKey> =>
  Option.fromNullable(profile.signing_keys.find((key) => key.kid === kid))
