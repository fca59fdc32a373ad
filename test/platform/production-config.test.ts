/** Configuration checks that stop a start, each naming the variable at fault; the keys generated in development. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describeConfigError, loadConfig } from "../../src/platform/config.ts"
import { TEST_UCP_SIGNING_KEY } from "../support/test-config.ts"
import { tempDirectory } from "../support/test-database.ts"

const load = (env: Record<string, string>) =>
  loadConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

const productionSecrets = {
  API_KEYS: "sk_live_a,sk_live_b",
  MERCHANT_API_KEYS: "mk_live_a",
  VAULT_KEY: Buffer.alloc(32, 1).toString("base64"),
  WEBHOOK_SECRET: "whsec_live",
  WEBHOOK_RECEIVER_SECRETS: "whsec_live,whsec_old",
  UCP_SIGNING_KEYS: JSON.stringify([TEST_UCP_SIGNING_KEY])
}

describe("production configuration", () => {
  it.effect("NODE_ENV=production without any secret names all six", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(load({ NODE_ENV: "production" }))
      const message = describeConfigError(error)
      for (
        const name of [
          "API_KEYS",
          "MERCHANT_API_KEYS",
          "VAULT_KEY",
          "WEBHOOK_SECRET",
          "WEBHOOK_RECEIVER_SECRETS",
          "UCP_SIGNING_KEYS"
        ]
      ) {
        expect(message).toContain(name)
      }
    }))

  it.effect("each missing secret is named on its own", () =>
    Effect.gen(function*() {
      for (const name of Object.keys(productionSecrets) as Array<keyof typeof productionSecrets>) {
        const { [name]: _, ...rest } = productionSecrets
        const message = describeConfigError(yield* Effect.flip(load({ NODE_ENV: "production", ...rest })))
        expect(message, name).toContain(name)
        // Only the missing one is listed (a name may be part of the missing one's: API_KEYS of MERCHANT_API_KEYS).
        const others = message.replaceAll(name, "")
        for (const other of Object.keys(rest)) expect(others, name).not.toContain(other)
      }
    }))

  it.effect("with every secret set, production starts and generates nothing", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const config = yield* load({ NODE_ENV: "production", DATA_DIR: dataDir, ...productionSecrets })
      expect(config.production).toBe(true)
      expect(config.generated).toEqual([])
      expect(config.apiKeys.map(Redacted.value)).toEqual(["sk_live_a", "sk_live_b"])
      expect(config.merchantApiKeys.map(Redacted.value)).toEqual(["mk_live_a"])
      expect(config.webhookReceiverSecrets.map(Redacted.value)).toEqual(["whsec_live", "whsec_old"])
      expect(config.databasePreparedStatements).toBe(true)
      expect(config.httpKeepAliveTimeoutSeconds).toBe(65)
      const behindPooler = yield* load({
        NODE_ENV: "production",
        DATA_DIR: dataDir,
        DATABASE_PREPARED_STATEMENTS: "false",
        HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "290",
        ...productionSecrets
      })
      expect(behindPooler.databasePreparedStatements).toBe(false)
      expect(behindPooler.httpKeepAliveTimeoutSeconds).toBe(290)
    }).pipe(Effect.scoped))

  it.effect("a bad VAULT_KEY, PORT, list, or a lone TLS file names the variable", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<[Record<string, string>, string]> = [
        [{ ...productionSecrets, VAULT_KEY: "c2hvcnQ=" }, "VAULT_KEY"],
        [{ ...productionSecrets, PORT: "http" }, "PORT"],
        [{ ...productionSecrets, PORT: "70000" }, "PORT"],
        [{ ...productionSecrets, TLS_CERT_FILE: "/etc/cert.pem" }, "TLS_KEY_FILE"],
        [{ ...productionSecrets, TLS_KEY_FILE: "/etc/key.pem" }, "TLS_CERT_FILE"],
        // Lists checked item by item still name their variable.
        [{ ...productionSecrets, API_VERSIONS: "2026-01-30,yesterday" }, "API_VERSIONS"],
        // A well-formed date without a codec is refused at start, not answered in another format.
        [{ ...productionSecrets, API_VERSIONS: "2025-09-29,2025-12-12" }, "API_VERSIONS"],
        [{ ...productionSecrets, WEBHOOK_API_VERSION: "2026-01-16" }, "WEBHOOK_API_VERSION"],
        [{ ...productionSecrets, ROLES: "checkout,cashier" }, "ROLES"],
        [{ ...productionSecrets, VAULT_RETIRED_KEYS: "c2hvcnQ=" }, "VAULT_RETIRED_KEYS"],
        [{ ...productionSecrets, DATABASE_PREPARED_STATEMENTS: "sometimes" }, "DATABASE_PREPARED_STATEMENTS"],
        [{ ...productionSecrets, HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "0" }, "HTTP_KEEP_ALIVE_TIMEOUT_SECONDS"],
        [{ ...productionSecrets, HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "291" }, "HTTP_KEEP_ALIVE_TIMEOUT_SECONDS"],
        [{ ...productionSecrets, HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "1.5" }, "HTTP_KEEP_ALIVE_TIMEOUT_SECONDS"]
      ]
      for (const [env, name] of cases) {
        const message = describeConfigError(yield* Effect.flip(load({ NODE_ENV: "production", ...env })))
        expect(message, JSON.stringify(env)).toContain(name)
      }
    }))

  it.effect("a key in both API_KEYS and MERCHANT_API_KEYS is refused at start, naming MERCHANT_API_KEYS", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      for (const env of [{ NODE_ENV: "production" }, { NODE_ENV: "development" }]) {
        const message = describeConfigError(
          yield* Effect.flip(
            load({ ...env, DATA_DIR: dataDir, ...productionSecrets, MERCHANT_API_KEYS: "mk_live_a,sk_live_b" })
          )
        )
        expect(message).toBe(
          "MERCHANT_API_KEYS: A key is in both API_KEYS and MERCHANT_API_KEYS: agent and merchant keys must differ"
        )
      }
    }).pipe(Effect.scoped))
})

describe("development configuration", () => {
  it.effect("missing keys are generated into DATA_DIR/secrets.json, one of each kind, kept for the next start", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const first = yield* load({ DATA_DIR: dataDir })
      expect(first.generated.map((secret) => secret.name)).toEqual([
        "api_key",
        "merchant_api_key",
        "vault_key",
        "webhook_secret",
        "ucp_signing_key"
      ])
      const stored = JSON.parse(readFileSync(join(dataDir, "secrets.json"), "utf8"))
      expect(first.apiKeys.map(Redacted.value)).toEqual([stored.api_key])
      expect(first.merchantApiKeys.map(Redacted.value)).toEqual([stored.merchant_api_key])
      expect(stored.merchant_api_key).toMatch(/^mk_test_[\w-]{32}$/)
      expect(stored.merchant_api_key).not.toBe(stored.api_key)
      const again = yield* load({ DATA_DIR: dataDir })
      expect(again.generated).toEqual([])
      expect(again.merchantApiKeys.map(Redacted.value)).toEqual([stored.merchant_api_key])
      // A variable that is set wins over the stored key, and the other kind's stays.
      const given = yield* load({ DATA_DIR: dataDir, MERCHANT_API_KEYS: "mk_mine" })
      expect(given.merchantApiKeys.map(Redacted.value)).toEqual(["mk_mine"])
      expect(given.apiKeys.map(Redacted.value)).toEqual([stored.api_key])
      // The stored agent key given as a merchant key is one key of both kinds.
      const both = describeConfigError(
        yield* Effect.flip(load({ DATA_DIR: dataDir, MERCHANT_API_KEYS: stored.api_key }))
      )
      expect(both).toContain("MERCHANT_API_KEYS")
    }).pipe(Effect.scoped))
})

describe("UCP_SIGNING_KEYS", () => {
  const second = { ...TEST_UCP_SIGNING_KEY, kid: "next_key" }
  it.effect("the keys given, the first signing unless UCP_SIGNING_KEY_ID names another of them", () =>
    Effect.gen(function*() {
      const base = { NODE_ENV: "production", ...productionSecrets }
      const one = yield* load(base)
      expect(one.ucpSigning.keys.map((key) => key.kid)).toEqual(["test_key_1"])
      expect(one.ucpSigning.signingKeyId).toBe("test_key_1")
      const two = { ...base, UCP_SIGNING_KEYS: JSON.stringify([TEST_UCP_SIGNING_KEY, second]) }
      expect((yield* load({ ...two, UCP_SIGNING_KEY_ID: "next_key" })).ucpSigning.signingKeyId).toBe("next_key")
      const unknown = describeConfigError(yield* Effect.flip(load({ ...two, UCP_SIGNING_KEY_ID: "other" })))
      expect(unknown).toContain("UCP_SIGNING_KEY_ID")
    }))

  it.effect("refused, naming the variable and never quoting a key: not JSON, a public key, a duplicate kid", () =>
    Effect.gen(function*() {
      const { d: _d, ...publicOnly } = TEST_UCP_SIGNING_KEY
      for (
        const bad of [
          "not json",
          "[]",
          JSON.stringify([publicOnly]),
          JSON.stringify([TEST_UCP_SIGNING_KEY, TEST_UCP_SIGNING_KEY]),
          JSON.stringify([{ ...TEST_UCP_SIGNING_KEY, crv: "P-521" }])
        ]
      ) {
        const message = describeConfigError(
          yield* Effect.flip(load({ NODE_ENV: "production", ...productionSecrets, UCP_SIGNING_KEYS: bad }))
        )
        expect(message, bad).toContain("UCP_SIGNING_KEYS")
        expect(message, bad).not.toContain(TEST_UCP_SIGNING_KEY.d)
      }
    }))

  it.effect("in development one P-256 key is generated once into secrets.json and kept", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const first = yield* load({ DATA_DIR: dataDir })
      const stored = JSON.parse(JSON.parse(readFileSync(join(dataDir, "secrets.json"), "utf8")).ucp_signing_key)
      expect(stored).toMatchObject({ kty: "EC", crv: "P-256", kid: first.ucpSigning.signingKeyId })
      expect(typeof stored.d).toBe("string")
      expect((yield* load({ DATA_DIR: dataDir })).ucpSigning.signingKeyId).toBe(first.ucpSigning.signingKeyId)
    }).pipe(Effect.scoped))
})

describe("STRIPE_THREE_D_SECURE_IMPORT", () => {
  it.effect("off unless set; true and false parse; anything else names the variable", () =>
    Effect.gen(function*() {
      const base = { NODE_ENV: "production", ...productionSecrets }
      expect((yield* load(base)).stripe.threeDSecureImport).toBe(false)
      expect((yield* load({ ...base, STRIPE_THREE_D_SECURE_IMPORT: "true" })).stripe.threeDSecureImport).toBe(true)
      expect((yield* load({ ...base, STRIPE_THREE_D_SECURE_IMPORT: "false" })).stripe.threeDSecureImport).toBe(false)
      const error = yield* Effect.flip(load({ ...base, STRIPE_THREE_D_SECURE_IMPORT: "maybe" }))
      expect(describeConfigError(error)).toContain("STRIPE_THREE_D_SECURE_IMPORT")
    }))
})
