/** How long a profile and a failure are kept: Cache-Control within [60 s, 24 h], a doubling backoff. */
import { describe, expect, it } from "@effect/vitest"
import {
  failureLifetimeMs,
  PROFILE_TTL_CEILING_MS,
  PROFILE_TTL_FLOOR_MS,
  profileLifetimeMs
} from "../../src/ucp/profile/cache-policy.ts"

describe("a profile's lifetime", () => {
  it.each(
    [
      ["public, max-age=300", undefined, 300_000],
      ["max-age=300", "100", 200_000],
      ["max-age=300", "290", PROFILE_TTL_FLOOR_MS],
      ["public, max-age=\"120\"", undefined, 120_000],
      ["MAX-AGE=90", undefined, 90_000],
      ["public, s-maxage=600, max-age=120", undefined, 600_000],
      ["max-age=120, max-age=600", undefined, 120_000],
      ["no-store", undefined, PROFILE_TTL_FLOOR_MS],
      ["no-cache, max-age=600", undefined, PROFILE_TTL_FLOOR_MS],
      ["private, max-age=600", undefined, PROFILE_TTL_FLOOR_MS],
      ["max-age=10", undefined, PROFILE_TTL_FLOOR_MS],
      ["max-age=-5", undefined, PROFILE_TTL_FLOOR_MS],
      ["max-age=1e9", undefined, PROFILE_TTL_FLOOR_MS],
      ["max-age=99999999999", undefined, PROFILE_TTL_CEILING_MS],
      ["max-age=600", "soon", 600_000],
      [undefined, undefined, PROFILE_TTL_FLOOR_MS],
      ["", undefined, PROFILE_TTL_FLOOR_MS]
    ] as const
  )("Cache-Control %j with Age %j: %d ms", (cacheControl, age, expected) => {
    expect(profileLifetimeMs(cacheControl, age)).toBe(expected)
  })
})

describe("a failure's lifetime", () => {
  it("doubles from 5 s with each failure in a row, up to 5 min", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => failureLifetimeMs(n))).toEqual([
      5_000,
      10_000,
      20_000,
      40_000,
      80_000,
      160_000,
      300_000,
      300_000,
      300_000
    ])
    expect(failureLifetimeMs(0)).toBe(5_000)
    expect(failureLifetimeMs(3, { initialMs: 1_000, maxMs: 3_000 })).toBe(3_000)
  })
})
