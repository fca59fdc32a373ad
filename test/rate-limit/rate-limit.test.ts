import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import {
  isFull,
  makeRateLimiter,
  RateLimited,
  RateLimiter,
  RateLimiterLive,
  take,
  type TokenBucket
} from "../../src/rate-limit/rate-limit.ts"

const options = { capacity: 3, refillPerSecond: 1 }

describe("token bucket", () => {
  it("starts full and allows a burst of `capacity`", () => {
    let state: TokenBucket | undefined
    for (let i = 0; i < 3; i++) {
      const r = take(state, options, 0)
      expect(r.allowed).toBe(true)
      expect(r.retryAfterSeconds).toBe(0)
      state = r.state
    }
    const denied = take(state, options, 0)
    expect(denied.allowed).toBe(false)
    expect(denied.retryAfterSeconds).toBe(1)
  })

  it("refills at the configured rate, up to capacity", () => {
    const empty: TokenBucket = { tokens: 0, updatedAt: 0 }
    expect(take(empty, options, 999).allowed).toBe(false)
    expect(take(empty, options, 1000).allowed).toBe(true)
    const later = take(empty, options, 60_000)
    expect(later.allowed).toBe(true)
    expect(later.state.tokens).toBe(2) // capped at 3, minus the one taken
  })

  it("computes Retry-After from the missing fraction, rounded up", () => {
    const slow = { capacity: 1, refillPerSecond: 0.1 } // one token per 10 s
    const empty: TokenBucket = { tokens: 0, updatedAt: 0 }
    expect(take(empty, slow, 0).retryAfterSeconds).toBe(10)
    expect(take(empty, slow, 2_500).retryAfterSeconds).toBe(8) // 7.5 s left → 8
    expect(take(empty, slow, 9_999).retryAfterSeconds).toBe(1)
    expect(take(empty, slow, 10_000).allowed).toBe(true)
  })

  it("does not lose or gain tokens when the clock goes backwards", () => {
    const state: TokenBucket = { tokens: 0.5, updatedAt: 10_000 }
    const r = take(state, options, 5_000)
    expect(r.allowed).toBe(false)
    expect(r.state).toEqual({ tokens: 0.5, updatedAt: 10_000 })
  })

  it("a denied take does not consume", () => {
    const empty: TokenBucket = { tokens: 0, updatedAt: 0 }
    const denied = take(empty, options, 500)
    expect(denied.state.tokens).toBeCloseTo(0.5)
    expect(take(denied.state, options, 1000).allowed).toBe(true)
  })

  it("a non-positive rate never refills and caps Retry-After", () => {
    const r = take({ tokens: 0, updatedAt: 0 }, { capacity: 1, refillPerSecond: 0 }, 1e9)
    expect(r.allowed).toBe(false)
    expect(r.retryAfterSeconds).toBe(86_400)
  })

  it("isFull", () => {
    expect(isFull({ tokens: 3, updatedAt: 0 }, options, 0)).toBe(true)
    expect(isFull({ tokens: 1, updatedAt: 0 }, options, 1_000)).toBe(false)
    expect(isFull({ tokens: 1, updatedAt: 0 }, options, 2_000)).toBe(true)
  })
})

describe("RateLimiter service", () => {
  const consume = (key: string, opts = options) => Effect.flatMap(RateLimiter, (limiter) => limiter.consume(key, opts))

  it.effect("allows a burst, then fails with Retry-After, then refills with time", () =>
    Effect.gen(function*() {
      yield* consume("key-a")
      yield* consume("key-a")
      yield* consume("key-a")
      const denied = yield* Effect.flip(consume("key-a"))
      expect(denied).toBeInstanceOf(RateLimited)
      expect(denied.retryAfterSeconds).toBe(1)

      yield* TestClock.adjust("500 millis")
      const stillDenied = yield* Effect.flip(consume("key-a"))
      expect(stillDenied.retryAfterSeconds).toBe(1)

      yield* TestClock.adjust("500 millis")
      yield* consume("key-a")
      expect(Either.isLeft(yield* Effect.either(consume("key-a")))).toBe(true)

      yield* TestClock.adjust("10 seconds")
      yield* consume("key-a")
      yield* consume("key-a")
      yield* consume("key-a")
      expect(Either.isLeft(yield* Effect.either(consume("key-a")))).toBe(true)
    }).pipe(Effect.provide(RateLimiterLive)))

  it.effect("keys are independent", () =>
    Effect.gen(function*() {
      const one = { capacity: 1, refillPerSecond: 1 }
      yield* consume("a", one)
      expect(Either.isLeft(yield* Effect.either(consume("a", one)))).toBe(true)
      yield* consume("b", one)
    }).pipe(Effect.provide(RateLimiterLive)))

  it.effect("Retry-After reflects a slow refill", () =>
    Effect.gen(function*() {
      const slow = { capacity: 1, refillPerSecond: 1 / 30 }
      yield* consume("k", slow)
      expect((yield* Effect.flip(consume("k", slow))).retryAfterSeconds).toBe(30)
      yield* TestClock.adjust("20 seconds")
      expect((yield* Effect.flip(consume("k", slow))).retryAfterSeconds).toBe(10)
      yield* TestClock.adjust("10 seconds")
      yield* consume("k", slow)
    }).pipe(Effect.provide(RateLimiterLive)))

  it.effect("stays bounded: idle full buckets are forgotten, which changes nothing", () =>
    Effect.gen(function*() {
      const limiter = yield* makeRateLimiter({ maxKeys: 10 })
      const one = { capacity: 1, refillPerSecond: 1 }
      // drain a key, then let it refill while other keys arrive
      yield* limiter.consume("drained", one)
      yield* TestClock.adjust("2 seconds")
      for (let i = 0; i < 50; i++) {
        yield* limiter.consume(`k${i}`, one)
        expect(yield* limiter.size).toBeLessThanOrEqual(10)
      }
      // the drained bucket has been evicted or refilled: either way one token is available
      yield* limiter.consume("drained", one)
      // a bucket in use right now is never evicted by its own insertion
      expect(Either.isLeft(yield* Effect.either(limiter.consume("drained", one)))).toBe(true)
    }))

  it.effect("evicts only full buckets while they suffice", () =>
    Effect.gen(function*() {
      const limiter = yield* makeRateLimiter({ maxKeys: 3 })
      const one = { capacity: 1, refillPerSecond: 1 }
      yield* limiter.consume("a", one)
      yield* limiter.consume("b", one)
      yield* limiter.consume("c", one)
      yield* TestClock.adjust("1 second") // a, b, c are full again
      yield* limiter.consume("d", one)
      expect(yield* limiter.size).toBe(1)
      expect(Either.isLeft(yield* Effect.either(limiter.consume("d", one)))).toBe(true)
    }))
})
