/**
 * `FEED_RATE_LIMIT_PER_MINUTE`: 600 by default, a positive integer, a bad value stopping the start with its
 * name. `FEED_API_URL`: given, `off`, or unset (in development, this process's own Feed API).
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { describeConfigError, loadConfig } from "../../src/platform/config.ts"
import { TEST_UCP_SIGNING_KEY } from "../support/test-config.ts"
import { tempDirectory } from "../support/test-database.ts"

const load = (env: Record<string, string>) =>
  loadConfig.pipe(
    Effect.withConfigProvider(
      ConfigProvider.fromMap(
        new Map(
          Object.entries({
            API_KEYS: "sk_test",
            MERCHANT_API_KEYS: "mk_test",
            WEBHOOK_SECRET: "whsec_test",
            VAULT_KEY: Buffer.alloc(32, 1).toString("base64"),
            UCP_SIGNING_KEYS: JSON.stringify([TEST_UCP_SIGNING_KEY]),
            ...env
          })
        )
      )
    )
  )

describe("FEED_RATE_LIMIT_PER_MINUTE", () => {
  it.effect("600 unless set; a positive integer when set", () =>
    Effect.gen(function*() {
      expect((yield* load({})).feedRateLimitPerMinute).toBe(600)
      expect((yield* load({ FEED_RATE_LIMIT_PER_MINUTE: "30" })).feedRateLimitPerMinute).toBe(30)
      for (const bad of ["0", "-5", "1.5", "many"]) {
        const error = yield* Effect.flip(load({ FEED_RATE_LIMIT_PER_MINUTE: bad }))
        expect(describeConfigError(error), bad).toContain("FEED_RATE_LIMIT_PER_MINUTE")
      }
    }))
})

const publication = (env: Record<string, string>) =>
  Effect.map(load(env), (config) =>
    Option.getOrUndefined(
      Option.map(config.feedPublication, (p) => ({ ...p, apiKey: Redacted.value(p.apiKey) }))
    ))

const productionSecrets = {
  NODE_ENV: "production",
  WEBHOOK_RECEIVER_SECRETS: "whsec_test"
}

describe("FEED_API_URL", () => {
  it.effect("unset in development: this process's own Feed API on the loopback address, with the first agent key", () =>
    Effect.gen(function*() {
      expect(yield* publication({ API_KEYS: "sk_first,sk_second" })).toEqual({
        apiUrl: "http://127.0.0.1:8080",
        apiKey: "sk_first",
        targetCountry: undefined
      })
      expect(yield* publication({ PORT: "9100", HOST: "0.0.0.0", FEED_TARGET_COUNTRY: "US" })).toEqual({
        apiUrl: "http://127.0.0.1:9100",
        apiKey: "sk_test",
        targetCountry: "US"
      })
      // Listening on one address: that address (as the order events' default target).
      expect((yield* publication({ PORT: "9100", HOST: "10.1.2.3" }))?.apiUrl).toBe("http://10.1.2.3:9100")
      expect((yield* publication({ PORT: "9100", HOST: "::1" }))?.apiUrl).toBe("http://[::1]:9100")
      // A PUBLIC_BASE_URL may be a name this host cannot reach: not used.
      expect((yield* publication({ PUBLIC_BASE_URL: "https://shop.example" }))?.apiUrl).toBe("http://127.0.0.1:8080")
    }))

  it.effect("the development default uses the generated agent key when API_KEYS is unset", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const config = yield* load({ API_KEYS: "", DATA_DIR: dataDir })
      const key = Redacted.value(config.apiKeys[0]!)
      expect(key).toMatch(/^sk_test_/)
      expect(Option.map(config.feedPublication, (p) => Redacted.value(p.apiKey))).toEqual(Option.some(key))
    }).pipe(Effect.scoped))

  it.effect("no default without both ends in this process, under TLS, or in production", () =>
    Effect.gen(function*() {
      expect(yield* publication({ ROLES: "checkout,delegate,mcp,webhook_sender" })).toBeUndefined()
      expect(yield* publication({ ROLES: "webhook_receiver" })).toBeUndefined()
      expect(yield* publication({ API_VERSIONS: "2025-09-29,2026-01-30" })).toBeUndefined()
      expect(yield* publication({ TLS_CERT_FILE: "cert.pem", TLS_KEY_FILE: "key.pem" })).toBeUndefined()
      expect(yield* publication(productionSecrets)).toBeUndefined()
      expect(yield* publication({ ROLES: "checkout,webhook_receiver" })).toMatchObject({
        apiUrl: "http://127.0.0.1:8080"
      })
    }))

  it.effect("off (any case) turns the publication off, and needs no FEED_API_KEY", () =>
    Effect.gen(function*() {
      for (const off of ["off", "OFF", " Off "]) {
        expect(yield* publication({ FEED_API_URL: off }), off).toBeUndefined()
        expect(yield* publication({ ...productionSecrets, FEED_API_URL: off }), off).toBeUndefined()
      }
    }))

  it.effect("a URL given is used as given, in development and production, and needs FEED_API_KEY", () =>
    Effect.gen(function*() {
      const given = { FEED_API_URL: "https://agent.example/acp/", FEED_API_KEY: "agent_issued" }
      const expected = { apiUrl: "https://agent.example/acp", apiKey: "agent_issued", targetCountry: undefined }
      expect(yield* publication(given)).toEqual(expected)
      expect(yield* publication({ ...productionSecrets, ...given })).toEqual(expected)
      const missing = yield* Effect.flip(load({ FEED_API_URL: "https://agent.example" }))
      expect(describeConfigError(missing)).toContain("FEED_API_KEY")
      for (const bad of ["", "ftp://agent.example", "https://agent.example/?q=1", "no"]) {
        const error = yield* Effect.flip(load({ FEED_API_URL: bad, FEED_API_KEY: "k" }))
        expect(describeConfigError(error), bad).toContain("FEED_API_URL")
      }
    }))
})
