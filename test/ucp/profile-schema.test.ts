/**
 * The UCP 2026-04-08 platform-profile schema: what the release's schemas require is required, what
 * they leave open stays open (config kept whole, unknown keys accepted), and a failure names its
 * first problem by JSONPath.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import { firstFailureAtJsonPath } from "../../src/shared/schema-failure.ts"
import { orderWebhookUrl, type PlatformProfile, signingKey } from "../../src/ucp/profile/platform-profile.ts"
import { PROFILE_DECODERS } from "../../src/ucp/wire/ucp/versions.ts"
import { capability, ecKey, platformProfile, V, WEBHOOK_URL } from "./profile-fixtures.ts"

const decode = PROFILE_DECODERS["2026-04-08"]

const decoded = (input: unknown): PlatformProfile => {
  const result = decode(input)
  if (Either.isLeft(result)) throw new Error(firstFailureAtJsonPath(result.left).message)
  return result.right
}

/** The first problem's sentence. */
const problem = (input: unknown): string => {
  const result = decode(input)
  if (Either.isRight(result)) throw new Error("decoded, but should not have")
  return firstFailureAtJsonPath(result.left).message
}

const withCapability = (name: string, entry: unknown) =>
  platformProfile({ capabilities: { ...platformProfile().ucp.capabilities, [name]: [entry] } })

const withKey = (key: unknown) => platformProfile({}, { signing_keys: [key] })

const service = (extra: Record<string, unknown>) =>
  platformProfile({
    services: {
      "dev.ucp.shopping": [{ version: V, spec: "https://ucp.dev/specification/overview", transport: "rest", ...extra }]
    }
  })

/** A payment handler's fields over the defaults; a field given as undefined is left out. */
const handler = (extra: Record<string, unknown>) =>
  platformProfile({
    payment_handlers: {
      "com.example.pay": [
        Object.fromEntries(
          Object.entries({
            id: "pay_1",
            version: V,
            spec: "https://example.com/pay",
            schema: "https://example.com/pay.json",
            ...extra
          }).filter(([, value]) => value !== undefined)
        )
      ]
    }
  })

describe("a valid profile", () => {
  it("decodes with every registry, the order webhook URL and the signing keys", () => {
    const profile = decoded(platformProfile())
    expect(profile.ucp.version).toBe(V)
    expect(Object.keys(profile.ucp.services)).toEqual(["dev.ucp.shopping"])
    expect(profile.ucp.services["dev.ucp.shopping"]!.map((s) => s.transport)).toEqual(["rest", "a2a"])
    expect(profile.ucp.capabilities["dev.ucp.shopping.discount"]![0]!.extends).toEqual([
      "dev.ucp.shopping.checkout",
      "dev.ucp.shopping.cart"
    ])
    expect(orderWebhookUrl(profile)).toEqual(Option.some(WEBHOOK_URL))
    expect(orderWebhookUrl(profile, "2025-01-01")).toEqual(Option.none())
    expect(signingKey(profile, "platform_2026")).toEqual(Option.some(ecKey()))
    expect(signingKey(profile, "other")).toEqual(Option.none())
  })

  it("config objects are kept whole; unknown keys elsewhere are accepted and dropped", () => {
    const profile = decoded({
      ...platformProfile({ extra_ucp_field: 1 }),
      extra_top_field: { any: "thing" }
    })
    expect(profile.ucp.payment_handlers["com.example.processor_tokenizer"]![0]!.config).toEqual({
      environment: "test",
      nested: { deep: [1, 2, 3] }
    })
    expect(profile.ucp.capabilities["dev.ucp.shopping.order"]![0]!.config).toEqual({
      webhook_url: WEBHOOK_URL,
      batch: true
    })
    expect(profile).not.toHaveProperty("extra_top_field")
    expect(profile.ucp).not.toHaveProperty("extra_ucp_field")
  })

  it("capabilities and signing keys may be absent (only services and payment handlers are required)", () => {
    const bare = platformProfile()
    delete (bare.ucp as Record<string, unknown>).capabilities
    delete (bare as Record<string, unknown>).signing_keys
    const profile = decoded(bare)
    expect(profile.ucp.capabilities).toEqual({})
    expect(profile.signing_keys).toEqual([])
    expect(orderWebhookUrl(profile)).toEqual(Option.none())
  })

  it("other key types pass as the schema allows; a private member is never kept", () => {
    const rsa = { kid: "rsa_1", kty: "RSA", n: "sXch", e: "AQAB", alg: "RS256" }
    expect(decoded(withKey(rsa)).signing_keys).toEqual([rsa])
    const okp = { kid: "ed_1", kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" }
    expect(decoded(withKey(okp)).signing_keys).toEqual([okp])
    const secret = decoded(withKey({ ...ecKey(), d: "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI" }))
    expect(secret.signing_keys[0]).not.toHaveProperty("d")
    const p384 = decoded(withKey({ ...ecKey(), crv: "P-384", x: "A".repeat(64), y: "B".repeat(64), alg: "ES384" }))
    expect(p384.signing_keys[0]!.crv).toBe("P-384")
    const otherCurve = { kid: "k", kty: "EC", crv: "secp256k1", x: "short", y: "short" }
    expect(decoded(withKey(otherCurve)).signing_keys).toEqual([otherCurve])
  })

  it("an a2a service needs no schema; an embedded one does", () => {
    expect(decoded(service({ transport: "a2a" })).ucp.services["dev.ucp.shopping"]![0]!.transport).toBe("a2a")
    expect(problem(service({ transport: "embedded" }))).toContain("must have a schema, as every embedded service does")
  })
})

describe("what the schema refuses, named by JSONPath", () => {
  it("the top level and the ucp object", () => {
    expect(problem([])).toBe("$ must be an object")
    expect(problem({})).toBe("$.ucp is required")
    expect(problem({ ucp: [] })).toBe("$.ucp must be an object")
    const noHandlers = platformProfile()
    delete (noHandlers.ucp as Record<string, unknown>).payment_handlers
    expect(problem(noHandlers)).toBe("$.ucp.payment_handlers is required")
    expect(problem(platformProfile({ version: "2026-4-8" }))).toBe(
      "$.ucp.version must be a version in YYYY-MM-DD format"
    )
    expect(problem(platformProfile({ status: "pending" }))).toContain("$.ucp.status must be one of")
    expect(problem(platformProfile({ services: [] }))).toBe("$.ucp.services must be an object")
  })

  it("registry keys and extends values must be reverse-domain names", () => {
    for (
      const name of ["checkout", "Dev.ucp.shopping.checkout", "dev.ucp.Shopping", "dev..ucp", "1dev.ucp", "dev.ucp-x"]
    ) {
      expect(problem(withCapability(name, capability("x"))), name).toContain("must be a reverse-domain name")
    }
    expect(problem(platformProfile({ services: { shopping: [] } }))).toBe(
      "$.ucp.services.shopping must be a reverse-domain name such as dev.ucp.shopping.checkout"
    )
    expect(decoded(handler({})).ucp.payment_handlers["com.example.pay"]![0]!.id).toBe("pay_1")
    expect(
      problem(platformProfile({ payment_handlers: { "Com.Example": [] } }))
    ).toContain("$.ucp.payment_handlers[\"Com.Example\"] must be a reverse-domain name")
    for (const parent of ["", "checkout", [], ["dev.ucp.shopping.checkout", "Cart"], 7]) {
      expect(problem(withCapability("com.example.x.y", capability("y", { extends: parent }))), String(parent))
        .toContain(
          "$.ucp.capabilities[\"com.example.x.y\"][0].extends must be a reverse-domain capability name or a non-empty array of them"
        )
    }
  })

  it("a capability needs version, spec and schema, as absolute URIs", () => {
    const path = "$.ucp.capabilities[\"com.example.x.y\"][0]"
    expect(problem(withCapability("com.example.x.y", { version: V, schema: "https://x.example/s.json" }))).toBe(
      `${path}.spec is required`
    )
    expect(problem(withCapability("com.example.x.y", { version: V, spec: "https://x.example/" }))).toBe(
      `${path}.schema is required`
    )
    expect(problem(withCapability("com.example.x.y", capability("y", { spec: "/relative/spec" })))).toBe(
      `${path}.spec must be an absolute URI`
    )
    expect(problem(withCapability("com.example.x.y", capability("y", { version: "latest" })))).toBe(
      `${path}.version must be a version in YYYY-MM-DD format`
    )
    expect(problem(withCapability("com.example.x.y", capability("y", { config: [] })))).toBe(
      `${path}.config must be an object`
    )
    expect(problem(withCapability("com.example.x.y", "checkout"))).toBe(`${path} must be an object`)
  })

  it("the order capability's config must name an absolute webhook_url", () => {
    const path = "$.ucp.capabilities[\"dev.ucp.shopping.order\"][0].config"
    expect(problem(withCapability("dev.ucp.shopping.order", capability("order")))).toBe(`${path} is required`)
    expect(problem(withCapability("dev.ucp.shopping.order", capability("order", { config: {} })))).toBe(
      `${path}.webhook_url is required`
    )
    expect(
      problem(withCapability("dev.ucp.shopping.order", capability("order", { config: { webhook_url: "/hooks" } })))
    ).toBe(`${path}.webhook_url must be an absolute URI`)
    expect(
      problem(withCapability("dev.ucp.shopping.order", capability("order", { config: { webhook_url: 42 } })))
    ).toBe(`${path}.webhook_url must be a string`)
  })

  it("a service's transport is one of four; spec is required", () => {
    const path = "$.ucp.services[\"dev.ucp.shopping\"][0]"
    expect(problem(service({ transport: "grpc", schema: "https://x.example/s" }))).toContain(
      `${path}.transport must be one of`
    )
    expect(problem(service({}))).toBe(`${path} must have a schema, as every rest service does`)
    expect(
      problem(platformProfile({ services: { "dev.ucp.shopping": [{ version: V, transport: "a2a" }] } }))
    ).toBe(`${path}.spec is required`)
    expect(problem(service({ schema: "https://x.example/s", endpoint: "not a uri" }))).toBe(
      `${path}.endpoint must be an absolute URI`
    )
  })

  it("a payment handler needs an id; its instruments, when listed, are not empty", () => {
    const path = "$.ucp.payment_handlers[\"com.example.pay\"][0]"
    expect(problem(handler({ id: undefined }))).toBe(`${path}.id is required`)
    expect(problem(handler({ available_instruments: [] }))).toBe(`${path}.available_instruments must not be empty`)
    expect(problem(handler({ available_instruments: [{ constraints: { a: 1 } }] }))).toBe(
      `${path}.available_instruments[0].type is required`
    )
    expect(problem(handler({ available_instruments: [{ type: "card", constraints: {} }] }))).toBe(
      `${path}.available_instruments[0].constraints must have at least one property`
    )
  })

  it("signing keys: kid and kty always, an EC key's crv, x and y of its curve's size", () => {
    expect(problem(withKey({ kty: "EC" }))).toBe("$.signing_keys[0].kid is required")
    expect(problem(withKey({ kid: "k" }))).toBe("$.signing_keys[0].kty is required")
    const { y: _y, ...noY } = ecKey()
    expect(problem(withKey(noY))).toBe("$.signing_keys[0] must have crv, x and y, as an EC key does")
    expect(problem(withKey({ ...ecKey(), x: "tooShort" }))).toBe(
      "$.signing_keys[0] must have x and y of 32 bytes each in base64url, as a P-256 key does"
    )
    expect(problem(withKey({ ...ecKey(), crv: "P-384" }))).toBe(
      "$.signing_keys[0] must have x and y of 48 bytes each in base64url, as a P-384 key does"
    )
    expect(problem(withKey({ ...ecKey(), use: "wrap" }))).toContain("$.signing_keys[0].use must be one of")
    expect(problem(platformProfile({}, { signing_keys: {} }))).toContain("$.signing_keys")
  })
})
