/** `UCP_PROFILE_*`: the allowed hosts and the fetch limits, checked as they are read. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import {
  describeConfigError,
  loadConfig,
  parseAllowedProfileHost,
  UCP_PROFILE_DEFAULTS
} from "../../src/platform/config.ts"
import { ucpConfig } from "../../src/platform/ucp-config.ts"
import { TEST_UCP_SIGNING_KEY } from "../support/test-config.ts"

const read = (env: Record<string, string>) =>
  Effect.either(Effect.withConfigProvider(ucpConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))

describe("UCP_PROFILE_ALLOWED_HOSTS entries", () => {
  it.each([
    ["localhost", { host: "localhost", port: undefined }],
    ["Profiles.Test:8443", { host: "profiles.test", port: 8443 }],
    ["127.0.0.1:80", { host: "127.0.0.1", port: 80 }],
    ["[::1]", { host: "::1", port: undefined }],
    ["[::1]:8080", { host: "::1", port: 8080 }],
    ["0x7f.1", { host: "127.0.0.1", port: undefined }]
  ])("%s", (entry, expected) => {
    expect(parseAllowedProfileHost(entry)).toEqual(expected)
  })

  it("refuses what is not host or host:port", () => {
    for (const entry of ["", "::1", "http://localhost", "host:0", "host:65536", "host/path", "-host", "a b", "[zz]"]) {
      expect(parseAllowedProfileHost(entry), entry).toBeUndefined()
    }
  })
})

describe("the UCP_PROFILE_* variables", () => {
  it.effect("defaults: no host allowed, 3 s to connect, 5 s in all, 256 KiB, 1000 entries", () =>
    Effect.gen(function*() {
      expect(yield* read({})).toEqual(Either.right({
        profileAllowedHosts: [],
        profileConnectTimeoutMs: UCP_PROFILE_DEFAULTS.connectTimeoutMs,
        profileTimeoutMs: UCP_PROFILE_DEFAULTS.timeoutMs,
        profileMaxBytes: 256 * 1024,
        profileCacheEntries: 1000
      }))
      expect(UCP_PROFILE_DEFAULTS).toMatchObject({ connectTimeoutMs: 3000, timeoutMs: 5000 })
    }))

  it.effect("set", () =>
    Effect.gen(function*() {
      const config = yield* read({
        UCP_PROFILE_ALLOWED_HOSTS: " localhost , 127.0.0.1:8080,",
        UCP_PROFILE_CONNECT_TIMEOUT_MS: "500",
        UCP_PROFILE_TIMEOUT_MS: "2000",
        UCP_PROFILE_MAX_BYTES: "65536",
        UCP_PROFILE_CACHE_ENTRIES: "10"
      })
      expect(config).toEqual(Either.right({
        profileAllowedHosts: [{ host: "localhost", port: undefined }, { host: "127.0.0.1", port: 8080 }],
        profileConnectTimeoutMs: 500,
        profileTimeoutMs: 2000,
        profileMaxBytes: 65536,
        profileCacheEntries: 10
      }))
    }))

  it.effect("a bad value names its variable", () =>
    Effect.gen(function*() {
      for (
        const [name, value] of [
          ["UCP_PROFILE_ALLOWED_HOSTS", "localhost,http://x"],
          ["UCP_PROFILE_TIMEOUT_MS", "0"],
          ["UCP_PROFILE_CONNECT_TIMEOUT_MS", "soon"],
          ["UCP_PROFILE_MAX_BYTES", "-1"],
          ["UCP_PROFILE_CACHE_ENTRIES", "0"]
        ] as const
      ) {
        const result = yield* read({ [name]: value })
        expect(Either.isLeft(result), name).toBe(true)
        if (Either.isLeft(result)) expect(describeConfigError(result.left)).toContain(name)
      }
    }))
})

describe("AppConfig.ucp", () => {
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

  it.effect("the service's configuration carries the UCP_PROFILE_* settings, and stops on a bad one", () =>
    Effect.gen(function*() {
      const config = yield* load({ UCP_PROFILE_ALLOWED_HOSTS: "profiles.internal:8443", UCP_PROFILE_MAX_BYTES: "1000" })
      expect(config.ucp.profileAllowedHosts).toEqual([{ host: "profiles.internal", port: 8443 }])
      expect(config.ucp.profileMaxBytes).toBe(1000)
      expect((yield* load({})).ucp.profileAllowedHosts).toEqual([])
      const error = yield* Effect.flip(load({ UCP_PROFILE_ALLOWED_HOSTS: "https://profiles.internal" }))
      expect(describeConfigError(error)).toContain("UCP_PROFILE_ALLOWED_HOSTS")
    }))
})
