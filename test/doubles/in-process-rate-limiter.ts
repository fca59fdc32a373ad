/** The in-process `RateLimiter` as a layer, for the tests that run on memory stores (fresh per build). */
import { Layer } from "effect"
import { makeInProcessRateLimiter } from "../../src/rate-limit/in-process-rate-limiter.ts"
import { RateLimiter } from "../../src/rate-limit/rate-limiter.ts"

export const InProcessRateLimiter: Layer.Layer<RateLimiter> = Layer.effect(RateLimiter, makeInProcessRateLimiter())
