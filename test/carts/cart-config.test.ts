/** `CART_TTL_SECONDS`: a week by default; a value that is not a positive integer stops the start, naming it. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { describeConfigError, loadConfig } from "../../src/platform/config.ts"
import { tempDirectory } from "../support/test-database.ts"

const load = (env: Record<string, string>) =>
  Effect.scoped(Effect.flatMap(tempDirectory(), (dataDir) =>
    loadConfig.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: dataDir, ...env }))))
    )))

describe("CART_TTL_SECONDS", () => {
  it.effect("defaults to 604800 (7 days); a positive integer is taken", () =>
    Effect.gen(function*() {
      expect((yield* load({})).cartTtlSeconds).toBe(604800)
      expect((yield* load({ CART_TTL_SECONDS: "3600" })).cartTtlSeconds).toBe(3600)
    }))

  it.effect("zero, a negative number or a word stops the start, naming the variable", () =>
    Effect.gen(function*() {
      for (const value of ["0", "-5", "week"]) {
        const error = yield* Effect.flip(load({ CART_TTL_SECONDS: value }))
        expect(describeConfigError(error), value).toContain("CART_TTL_SECONDS")
      }
    }))
})
