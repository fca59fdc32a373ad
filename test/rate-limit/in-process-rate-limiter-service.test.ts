import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { makeInProcessRateLimiter } from "../../src/rate-limit/in-process-rate-limiter.ts"
import { RateLimited, RateLimiter } from "../../src/rate-limit/rate-limiter.ts"
import { InProcessRateLimiter } from "../doubles/in-process-rate-limiter.ts"

const options = { capacity: 3, refillPerSecond: 1 }

describe("in-process RateLimiter", () => {
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
    }).pipe(Effect.provide(InProcessRateLimiter)))

  it.effect("keys are independent", () =>
    Effect.gen(function*() {
      const one = { capacity: 1, refillPerSecond: 1 }
      yield* consume("a", one)
      expect(Either.isLeft(yield* Effect.either(consume("a", one)))).toBe(true)
      yield* consume("b", one)
    }).pipe(Effect.provide(InProcessRateLimiter)))

  it.effect("Retry-After reflects a slow refill", () =>
    Effect.gen(function*() {
      const slow = { capacity: 1, refillPerSecond: 1 / 30 }
      yield* consume("k", slow)
      expect((yield* Effect.flip(consume("k", slow))).retryAfterSeconds).toBe(30)
      yield* TestClock.adjust("20 seconds")
      expect((yield* Effect.flip(consume("k", slow))).retryAfterSeconds).toBe(10)
      yield* TestClock.adjust("10 seconds")
      yield* consume("k", slow)
    }).pipe(Effect.provide(InProcessRateLimiter)))

  it.effect("stays bounded: idle full buckets are forgotten, which changes nothing", () =>
    Effect.gen(function*() {
      const limiter = yield* makeInProcessRateLimiter({ maxKeys: 10 })
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
      const limiter = yield* makeInProcessRateLimiter({ maxKeys: 3 })
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
