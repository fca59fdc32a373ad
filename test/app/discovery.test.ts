/**
 * `GET /.well-known/acp.json`: the discovery document of the ACP discovery RFC, exactly the
 * official `DiscoveryResponse` (every object closed, so no roles or merchant id), public, cacheable
 * for an hour, its versions oldest first and its services those of the enabled roles.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted, Schema } from "effect"
import { Catalog, fixedCatalog } from "../../src/catalog/catalog-service.ts"
import { DISCOUNT_EXTENSION } from "../../src/checkout/pricing/discounts.ts"
import type { Role } from "../../src/platform/config.ts"
import { demoCatalogFile, snapshotOf } from "../support/fixtures.ts"
import { get, testApp, type TestAppOptions } from "../support/http.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, testApp(options)) as Effect.Effect<A, E, never>

const discover = (options: Parameters<typeof get>[1] = {}) =>
  get("/.well-known/acp.json", { auth: false, version: false, ...options })

// The official DiscoveryResponse (spec/2026-04-17/json-schema/schema.agentic_checkout.json,
// $defs Discovery*), written out here independently of the service's own schema.
const VersionDate = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/))
const Uri = Schema.String.pipe(Schema.filter((s) => URL.canParse(s)))
const Unique = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Array(item).pipe(Schema.filter((items) => new Set(items).size === items.length))
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })
const OfficialDiscoveryResponse = Schema.Struct({
  protocol: Schema.Struct({
    name: Schema.Literal("acp"),
    version: VersionDate,
    supported_versions: Unique(VersionDate),
    documentation_url: optional(Uri)
  }),
  api_base_url: Uri,
  transports: Unique(Schema.Literal("rest", "mcp")),
  capabilities: Schema.Struct({
    services: Unique(Schema.Literal("checkout", "orders", "delegate_payment", "carts")),
    extensions: optional(
      Schema.Array(Schema.Struct({ name: Schema.String, spec: optional(Uri), schema: optional(Uri) }))
    ),
    intervention_types: optional(Unique(Schema.Literal("3ds", "biometric", "address_verification"))),
    supported_currencies: optional(Unique(Schema.String.pipe(Schema.pattern(/^[a-z]{3}$/)))),
    supported_locales: optional(Unique(Schema.String))
  })
})
const decodeOfficial = Schema.decodeUnknownEither(OfficialDiscoveryResponse, { onExcessProperty: "error" })

const expectOfficial = (body: unknown) => {
  const decoded = decodeOfficial(body)
  if (Either.isLeft(decoded)) throw new Error(`not a DiscoveryResponse:\n${decoded.left.message}`)
  const { protocol } = decoded.right
  // RFC §4.2: chronological, oldest first; the last is `version`; `rest` always offered.
  expect(protocol.supported_versions.length).toBeGreaterThan(0)
  expect(protocol.supported_versions).toEqual([...protocol.supported_versions].sort())
  expect(protocol.supported_versions[protocol.supported_versions.length - 1]).toBe(protocol.version)
  expect(decoded.right.transports).toContain("rest")
}

describe("GET /.well-known/acp.json", () => {
  it.effect("the official DiscoveryResponse, built from the configuration and the catalog", () =>
    run(Effect.gen(function*() {
      const response = yield* discover()
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("application/json")
      expectOfficial(response.body)
      expect(response.body).toEqual({
        protocol: {
          name: "acp",
          version: "2026-04-17",
          supported_versions: ["2025-09-29", "2026-01-30", "2026-04-17"],
          documentation_url: "https://merchant.test/docs"
        },
        api_base_url: "https://merchant.test",
        // Every role is on, mcp included.
        transports: ["rest", "mcp"],
        capabilities: {
          services: ["checkout", "orders", "delegate_payment", "carts"],
          // The demo catalog has coupons: the discount extension is active.
          extensions: [{
            name: DISCOUNT_EXTENSION.name,
            spec: DISCOUNT_EXTENSION.spec,
            schema: DISCOUNT_EXTENSION.schema
          }],
          intervention_types: ["3ds", "address_verification"],
          supported_currencies: ["usd"],
          supported_locales: ["en"]
        }
      })
      expect(response.text).not.toContain("merchant_test")
    })))

  it.effect("public: no API key, API-Version or signature needed, a wrong key changes nothing", () =>
    run(
      Effect.gen(function*() {
        const anonymous = yield* discover()
        expect(anonymous.status).toBe(200)
        const wrongKey = yield* discover({ auth: "sk_wrong", version: "1999-01-01" })
        expect(wrongKey.status).toBe(200)
        expect(wrongKey.body).toEqual(anonymous.body)
      }),
      { config: { requestSigningSecrets: [Redacted.make("signing_secret")] } }
    ))

  it.effect("cacheable for an hour", () =>
    run(Effect.gen(function*() {
      expect((yield* discover()).headers.get("cache-control")).toBe("public, max-age=3600")
    })))

  it.effect("supported_versions oldest first whatever the configured order; version the newest accepted", () =>
    run(
      Effect.gen(function*() {
        const { body } = yield* discover()
        expectOfficial(body)
        expect(body.protocol).toMatchObject({ version: "2026-01-30", supported_versions: ["2025-09-29", "2026-01-30"] })
      }),
      { config: { apiVersions: ["2026-01-30", "2025-09-29"] } }
    ))

  describe("services follow ROLES", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<Role>, ReadonlyArray<string>]> = [
      [["checkout"], ["checkout", "orders", "carts"]],
      [["delegate"], ["delegate_payment"]],
      [["delegate", "webhook_sender"], ["delegate_payment"]],
      [["webhook_receiver", "delegate", "checkout"], ["checkout", "orders", "delegate_payment", "carts"]]
    ]
    for (const [roles, services] of cases) {
      it.effect(`ROLES=${roles.join(",")} → ${services.join(", ")}`, () =>
        run(
          Effect.gen(function*() {
            const response = yield* discover()
            expect(response.status).toBe(200)
            expectOfficial(response.body)
            expect(response.body.capabilities.services).toEqual(services)
          }),
          { config: { roles: new Set(roles) } }
        ))
    }

    it.effect("carts only where 2026-04-17 is accepted (the one version with the Cart API)", () =>
      run(
        Effect.map(discover(), (response) => {
          expectOfficial(response.body)
          expect(response.body.capabilities.services).toEqual(["checkout", "orders", "delegate_payment"])
        }),
        { config: { apiVersions: ["2026-01-30", "2025-09-29"] } }
      ))

    it.effect("a process serving no ACP API (webhook roles only) answers 404: no ACP here", () =>
      run(
        Effect.gen(function*() {
          const response = yield* discover()
          expect(response.status).toBe(404)
          expect(response.body).toMatchObject({ type: "invalid_request", code: "not_found" })
          expect(response.headers.get("cache-control")).toBeNull()
        }),
        { config: { roles: new Set(["webhook_receiver", "webhook_sender"] as const) } }
      ))
  })

  it.effect("capabilities come from the catalog: its extensions, known intervention types, its currency", () => {
    const { coupons: _coupons, ...withoutCoupons } = demoCatalogFile()
    const catalog = snapshotOf({
      ...withoutCoupons,
      currency: "eur",
      interventions: { supported: ["biometric", "face_scan", "3ds", "biometric"] },
      extensions: [{
        name: "dev.example.gift_wrap",
        extends: ["$.CheckoutSession.gift_wrap"],
        spec: "https://example.com/gift_wrap"
      }]
    })
    return run(
      Effect.gen(function*() {
        const { body } = yield* discover()
        expectOfficial(body)
        expect(body.capabilities).toEqual({
          services: ["checkout", "orders", "delegate_payment", "carts"],
          // No coupons: no discount extension; the declaration without its session-level `extends`.
          extensions: [{ name: "dev.example.gift_wrap", spec: "https://example.com/gift_wrap" }],
          intervention_types: ["biometric", "3ds"],
          supported_currencies: ["eur"],
          supported_locales: ["en"]
        })
      }),
      { catalog: Layer.succeed(Catalog, fixedCatalog(catalog)) }
    )
  })

  it.effect("a catalog without extensions or interventions leaves both out", () => {
    const { coupons: _coupons, interventions: _interventions, ...plain } = demoCatalogFile()
    return run(
      Effect.gen(function*() {
        const { body } = yield* discover()
        expectOfficial(body)
        expect(Object.keys(body.capabilities).sort()).toEqual(["services", "supported_currencies", "supported_locales"])
      }),
      { catalog: Layer.succeed(Catalog, fixedCatalog(snapshotOf(plain))) }
    )
  })
})
