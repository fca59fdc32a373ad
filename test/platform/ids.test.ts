/**
 * Identifiers: prefix + 22 base62 characters, unique, every character of the alphabet used about
 * equally often (no modulo bias), across the refills of the random pool.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Ids, randomId } from "../../src/platform/ids.ts"

describe("ids", () => {
  it("prefix and 22 base62 characters, all distinct over many refills of the pool", () => {
    const ids = Array.from({ length: 20_000 }, () => randomId("cs_"))
    for (const id of ids) expect(id).toMatch(/^cs_[0-9A-Za-z]{22}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("characters are uniform over the alphabet", () => {
    const counts = new Map<string, number>()
    const n = 20_000
    for (let i = 0; i < n; i++) for (const c of randomId("").split("")) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    const expected = (n * 22) / 62
    // ~7100 per character; a biased `% 62` over bytes would give the first 8 characters ~25 % more.
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.06)
  })

  it.effect("the Ids service makes ids with the asked prefix", () =>
    Effect.gen(function*() {
      const ids = yield* Ids
      expect(yield* ids.make("ord_")).toMatch(/^ord_[0-9A-Za-z]{22}$/)
    }).pipe(Effect.provide(Ids.Live)))
})
