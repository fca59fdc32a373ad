/** `FEED_RATE_LIMIT_PER_MINUTE`: 600 by default, a positive integer, a bad value stopping the start with its name. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { describeConfigError, loadConfig } from "../../src/platform/config.ts"

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
