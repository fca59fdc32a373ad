import { describe, expect, it } from "@effect/vitest"
import { isFull, peek, take, type TokenBucket } from "../../src/rate-limit/model/token-bucket.ts"

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

  it("a denied take does not consume, and changes nothing (there is nothing to write)", () => {
    const empty: TokenBucket = { tokens: 0, updatedAt: 0 }
    const denied = take(empty, options, 500)
    expect(denied.allowed).toBe(false)
    expect(denied.state).toEqual(empty)
    expect(take(denied.state, options, 1000).allowed).toBe(true)
  })

  it("peek answers as take would, without taking", () => {
    const one: TokenBucket = { tokens: 1, updatedAt: 0 }
    expect(peek(one, options, 0)).toEqual({ allowed: true, retryAfterSeconds: 0 })
    expect(peek(undefined, options, 0)).toEqual({ allowed: true, retryAfterSeconds: 0 })
    expect(peek({ tokens: 0.25, updatedAt: 0 }, options, 0)).toEqual({ allowed: false, retryAfterSeconds: 1 })
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
