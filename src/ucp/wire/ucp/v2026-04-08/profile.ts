/**
 * The UCP 2026-04-08 platform profile (`profile_schema.json#/$defs/platform_profile`, with `ucp.json`,
 * `capability.json`, `service.json` and `payment_handler.json` at their `platform_schema`), written
 * from the release's schemas. What they constrain is checked: required fields, types, enums, the
 * reverse-domain pattern of every registry key and `extends` value, `YYYY-MM-DD` versions, absolute
 * URIs (`format: uri`), non-empty lists. None of them forbids additional properties: unknown keys
 * are accepted, and dropped except inside `config` and `constraints` (open by definition), which are
 * kept whole. Beyond those files: the order capability's `config` is `order.json#/$defs/platform_schema`
 * (`webhook_url` required), and an EC signing key needs `crv`, `x` and `y` (`signatures.md`), of the
 * curve's size for P-256 and P-384. A private key member (`d`) is never kept.
 */
import { Either, ParseResult, Schema, SchemaAST } from "effect"
import { optional } from "../../../../shared/schema-helpers.ts"
import { ORDER_CAPABILITY, type PlatformProfile as Profile } from "../../../profile/platform-profile.ts"

export const VERSION = "2026-04-08"

/** `shopping/types/reverse_domain_name.json`: at least two dot-separated lower-case segments. */
export const REVERSE_DOMAIN_NAME = /^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)+$/

export const ReverseDomainName = Schema.String.pipe(
  Schema.pattern(REVERSE_DOMAIN_NAME, {
    message: () => "must be a reverse-domain name such as dev.ucp.shopping.checkout"
  })
)

export const Version = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a version in YYYY-MM-DD format" })
)

const isAbsoluteUri = (value: string): boolean => {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return false
  try {
    new URL(value)
    return true
  } catch {
    return false
  }
}

/** `format: uri`: an absolute URI. */
export const Uri = Schema.String.pipe(Schema.filter(isAbsoluteUri, { message: () => "must be an absolute URI" }))

const isJsonObject = (u: unknown): boolean => typeof u === "object" && u !== null && !Array.isArray(u)

/** JSON Schema's `type: object`: an array is not one (Effect's structs alone would take it). */
const objectOf = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A, unknown> =>
  Schema.compose(
    Schema.Unknown.pipe(Schema.filter(isJsonObject, { message: () => "must be an object" })),
    schema as Schema.Schema<A, unknown>,
    { strict: false }
  )

/** `additionalProperties: true` with no other constraint: kept as sent. */
export const OpenObject = objectOf(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

const nonEmpty = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.Array(item).pipe(Schema.minItems(1, { message: () => "must not be empty" }))

/** A registry keyed by reverse-domain name: each key checked, its failure pointing at the key. */
const registry = <A, I>(entry: Schema.Schema<A, I>) => {
  const typed = Schema.Record({ key: Schema.String, value: Schema.Array(entry) })
  return Schema.transformOrFail(objectOf(typed), Schema.typeSchema(typed), {
    strict: true,
    decode: (entries) => {
      for (const key of Object.keys(entries)) {
        const checked = ParseResult.decodeUnknownEither(ReverseDomainName)(key)
        if (Either.isLeft(checked)) return ParseResult.fail(new ParseResult.Pointer(key, entries, checked.left))
      }
      return ParseResult.succeed(entries)
    },
    encode: ParseResult.succeed
  })
}

const entityFields = {
  version: Version,
  id: optional(Schema.String),
  config: optional(OpenObject)
}

/** `service.json#/$defs/platform_schema`: `spec` always, `schema` for every transport but a2a. */
export const ServiceEntry = objectOf(
  Schema.Struct({
    ...entityFields,
    spec: Uri,
    schema: optional(Uri),
    transport: Schema.Literal("rest", "mcp", "a2a", "embedded"),
    endpoint: optional(Uri)
  }).pipe(
    Schema.filter((service) =>
      service.transport === "a2a" || service.schema !== undefined ||
      `must have a schema, as every ${service.transport} service does`
    )
  )
)

/** `extends`: one parent or a non-empty list of parents, each a reverse-domain name. */
export const Extends = Schema.declare(
  (u: unknown): u is string | ReadonlyArray<string> => {
    const name = (v: unknown) => typeof v === "string" && REVERSE_DOMAIN_NAME.test(v)
    return name(u) || (Array.isArray(u) && u.length > 0 && u.every(name))
  },
  { message: () => "must be a reverse-domain capability name or a non-empty array of them" }
)

/** `capability.json#/$defs/platform_schema`. */
export const CapabilityEntry = objectOf(
  Schema.Struct({
    ...entityFields,
    spec: Uri,
    schema: Uri,
    extends: optional(Extends)
  })
)

/** `order.json#/$defs/platform_schema`: where the business sends order webhooks. Other keys are kept. */
export const OrderCapabilityConfig = objectOf(Schema.Struct({ webhook_url: Uri }))

const CapabilityRegistry = registry(CapabilityEntry)

/** The capability registry, with each order entry's `config` checked as the order capability defines it. */
const Capabilities = Schema.transformOrFail(CapabilityRegistry, Schema.typeSchema(CapabilityRegistry), {
  strict: true,
  decode: (capabilities) => {
    const entries = Object.hasOwn(capabilities, ORDER_CAPABILITY) ? capabilities[ORDER_CAPABILITY]! : []
    for (let i = 0; i < entries.length; i++) {
      const path = [ORDER_CAPABILITY, i, "config"] as const
      const config = entries[i]!.config
      if (config === undefined) {
        return ParseResult.fail(
          new ParseResult.Pointer(
            [...path],
            capabilities,
            new ParseResult.Missing(new SchemaAST.Type(OrderCapabilityConfig.ast))
          )
        )
      }
      const checked = ParseResult.decodeUnknownEither(OrderCapabilityConfig)(config)
      if (Either.isLeft(checked)) {
        return ParseResult.fail(new ParseResult.Pointer([...path], capabilities, checked.left))
      }
    }
    return ParseResult.succeed(capabilities)
  },
  encode: ParseResult.succeed
})

/** `shopping/types/available_payment_instrument.json`. */
export const AvailableInstrument = objectOf(
  Schema.Struct({
    type: Schema.String,
    constraints: optional(
      OpenObject.pipe(
        Schema.filter((constraints) => Object.keys(constraints).length > 0, {
          message: () => "must have at least one property"
        })
      )
    )
  })
)

/** `payment_handler.json#/$defs/platform_schema`. */
export const PaymentHandlerEntry = objectOf(
  Schema.Struct({
    ...entityFields,
    id: Schema.String,
    spec: Uri,
    schema: Uri,
    available_instruments: optional(nonEmpty(AvailableInstrument))
  })
)

/** Base64url without padding of a P-256 (32 bytes) or P-384 (48 bytes) coordinate. */
const COORDINATE_CHARACTERS: Readonly<Record<string, number>> = { "P-256": 43, "P-384": 64 }

/** `profile_schema.json#/$defs/signing_key`: a public JWK; any key type the schema allows passes. */
export const SigningKey = objectOf(
  Schema.Struct({
    kid: Schema.String,
    kty: Schema.String,
    crv: optional(Schema.String),
    x: optional(Schema.String),
    y: optional(Schema.String),
    n: optional(Schema.String),
    e: optional(Schema.String),
    use: optional(Schema.Literal("sig", "enc")),
    alg: optional(Schema.String)
  }).pipe(
    Schema.filter((key) => {
      if (key.kty !== "EC") return true
      if (key.crv === undefined || key.x === undefined || key.y === undefined) {
        return "must have crv, x and y, as an EC key does"
      }
      const characters = Object.hasOwn(COORDINATE_CHARACTERS, key.crv) ? COORDINATE_CHARACTERS[key.crv] : undefined
      const coordinate = (value: string) => /^[A-Za-z0-9_-]+$/.test(value) && value.length === characters
      return characters === undefined || (coordinate(key.x) && coordinate(key.y)) ||
        `must have x and y of ${characters === 43 ? 32 : 48} bytes each in base64url, as a ${key.crv} key does`
    })
  )
)

/** `ucp.json#/$defs/platform_schema`: `services` and `payment_handlers` required, `capabilities` not. */
export const PlatformUcp = objectOf(
  Schema.Struct({
    version: Version,
    status: optional(Schema.Literal("success", "error")),
    services: registry(ServiceEntry),
    capabilities: Schema.optionalWith(Capabilities, { exact: true, default: () => ({}) }),
    payment_handlers: registry(PaymentHandlerEntry)
  })
)

/** `profile_schema.json#/$defs/platform_profile`. */
export const PlatformProfile = objectOf(
  Schema.Struct({
    ucp: PlatformUcp,
    signing_keys: Schema.optionalWith(Schema.Array(SigningKey), { exact: true, default: () => [] })
  })
)

// The release's profile is this service's profile: a change to either that the other misses fails here.
const _decodesToTheDomain = (decoded: typeof PlatformProfile.Type): Profile => decoded
void _decodesToTheDomain
