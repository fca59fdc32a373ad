/** The vault as the server builds it from the environment: `VAULT_KEY` and `VAULT_RETIRED_KEYS`. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { VaultStore, type VaultStoreService } from "../../src/delegate-payment/vault-store.ts"
import { Vault, VaultLive } from "../../src/delegate-payment/vault.ts"
import { AppConfig, describeConfigError, loadConfig } from "../../src/platform/config.ts"
import { Ids } from "../../src/platform/ids.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { CARD_NUMBER, validated } from "../support/delegate.ts"
import { TEST_UCP_SIGNING_KEY } from "../support/test-config.ts"

const KEY_A = Buffer.alloc(32, 1).toString("base64")
const KEY_B = Buffer.alloc(32, 2).toString("base64")
const KEY_C = Buffer.alloc(32, 3).toString("base64")

/** The environment, with the secrets set so that nothing is generated into `DATA_DIR`. */
const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(
    ConfigProvider.fromMap(
      new Map(Object.entries({
        API_KEYS: "sk_test",
        WEBHOOK_SECRET: "whsec_test",
        UCP_SIGNING_KEYS: JSON.stringify([TEST_UCP_SIGNING_KEY]),
        ...env
      }))
    )
  )

/** The server's vault for `env` (configuration, then `VaultLive`), over `store`. */
const vaultFor = (env: Record<string, string>, store: VaultStoreService) =>
  Effect.gen(function*() {
    const config = yield* loadConfig.pipe(withEnv(env))
    return yield* Effect.provide(
      Vault,
      VaultLive.pipe(
        Layer.provide(Layer.mergeAll(Layer.succeed(AppConfig, config), Layer.succeed(VaultStore, store), Ids.Live))
      )
    )
  })

describe("vault keys from the environment", () => {
  it.effect("after a key rotation, cards vaulted under a key listed in VAULT_RETIRED_KEYS still open", () =>
    Effect.gen(function*() {
      const store = yield* VaultStore
      const before = yield* vaultFor({ VAULT_KEY: KEY_A }, store)
      const { id } = yield* before.tokenize(validated(), { clientKeyId: "key_1" })
      const record = Option.getOrThrow(yield* store.getToken(id))

      const rotated = yield* vaultFor({ VAULT_KEY: KEY_B, VAULT_RETIRED_KEYS: ` ${KEY_C}, ${KEY_A} ` }, store)
      expect((yield* rotated.revealCard(record)).number).toBe(CARD_NUMBER)
      // New cards go under the current key only.
      const { id: newId } = yield* rotated.tokenize(validated(), { clientKeyId: "key_1" })
      const newRecord = Option.getOrThrow(yield* store.getToken(newId))
      const onlyB = yield* vaultFor({ VAULT_KEY: KEY_B }, store)
      expect((yield* onlyB.revealCard(newRecord)).number).toBe(CARD_NUMBER)

      // Without the old key, its cards cannot be opened (the payment is refused, nothing leaks).
      expect((yield* Effect.flip(onlyB.revealCard(record))).reason).toBe("unknown_key")
    }).pipe(Effect.provide(MemoryVaultStore.pipe(Layer.provide(freshMemoryDatabase)))))

  it.effect("a VAULT_RETIRED_KEYS entry that is not base64 of 32 bytes stops the start, naming the variable", () =>
    Effect.gen(function*() {
      for (const retired of [`${KEY_A},c2hvcnQ=`, "not base64!", `${KEY_A}${KEY_A}`]) {
        const error = yield* Effect.flip(loadConfig.pipe(withEnv({ VAULT_KEY: KEY_B, VAULT_RETIRED_KEYS: retired })))
        const message = describeConfigError(error)
        expect(message, retired).toContain("VAULT_RETIRED_KEYS")
        expect(message, retired).not.toContain(KEY_A) // keys are never echoed
      }
      const none = yield* loadConfig.pipe(withEnv({ VAULT_KEY: KEY_B, VAULT_RETIRED_KEYS: " , " }))
      expect(none.retiredVaultKeys).toEqual([])
    }))
})
