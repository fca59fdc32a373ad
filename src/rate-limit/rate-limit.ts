/**
 * Rate limiting: a pure token bucket, and a small in-process `RateLimiter` service keyed by string
 * (e.g. the API key) that reads time from the Effect `Clock` (so tests drive it with `TestClock`).
 *
 * The in-process limiter is per process: with several processes each would enforce its own
 * budget, so the server uses the SQL one (`src/rate-limit/sql-rate-limiter.ts`, the same bucket in
 * one statement, shared by every process on the database); this one serves the tests that run on
 * memory stores. Its map is bounded: buckets that have refilled completely are the same
 * as absent ones and are dropped first; past the bound, the least recently used buckets go.
 */
import { Clock, Context, Data, Effect, Layer, Ref } from "effect"

/** State of one bucket: tokens left (fractional while refilling) as of `updatedAt` (Unix ms). */
export interface TokenBucket {
  readonly tokens: number
  readonly updatedAt: number
}

export interface BucketOptions {
  /** Burst size: the most requests allowed at once; at least 1. */
  readonly capacity: number
  /** Sustained rate: tokens added per second; must be positive. */
  readonly refillPerSecond: number
}

export interface TakeResult {
  readonly allowed: boolean
  readonly state: TokenBucket
  /** 0 when allowed; else whole seconds until a token is available (at least 1), for `Retry-After`. */
  readonly retryAfterSeconds: number
}

/** Upper bound of `retryAfterSeconds`, also used when the refill rate is not positive. */
export const MAX_RETRY_AFTER_SECONDS = 86_400

/** The bucket refilled up to `now` (a clock going backwards adds nothing). */
export const refill = (state: TokenBucket | undefined, options: BucketOptions, now: number): TokenBucket => {
  const capacity = Math.max(1, options.capacity)
  if (state === undefined) return { tokens: capacity, updatedAt: now }
  const elapsedMs = Math.max(0, now - state.updatedAt)
  const rate = Math.max(0, options.refillPerSecond)
  return {
    tokens: Math.min(capacity, state.tokens + (elapsedMs / 1000) * rate),
    updatedAt: Math.max(now, state.updatedAt)
  }
}

/** Absorbs floating-point drift of fractional refill rates (e.g. 20 s × 1/30 per second). */
const EPSILON = 1e-9

/**
 * Whether a bucket holding `tokens` (already refilled to now) has one to give, and else the whole
 * seconds until it will (at least 1), for `Retry-After`. Shared with the SQL limiter, whose
 * statement refills and takes but leaves this decision here.
 */
export const availability = (
  tokens: number,
  options: BucketOptions
): { readonly allowed: boolean; readonly retryAfterSeconds: number } => {
  if (tokens + EPSILON >= 1) return { allowed: true, retryAfterSeconds: 0 }
  const rate = options.refillPerSecond
  const wait = rate > 0 ? Math.ceil((1 - tokens) / rate - EPSILON) : MAX_RETRY_AFTER_SECONDS
  return { allowed: false, retryAfterSeconds: Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, wait)) }
}

/** Takes one token if there is one. An absent bucket is a full one. */
export const take = (state: TokenBucket | undefined, options: BucketOptions, now: number): TakeResult => {
  const current = refill(state, options, now)
  const { allowed, retryAfterSeconds } = availability(current.tokens, options)
  return allowed
    ? { allowed, state: { tokens: Math.max(0, current.tokens - 1), updatedAt: current.updatedAt }, retryAfterSeconds }
    : { allowed, state: current, retryAfterSeconds }
}

/** Whether the bucket would be full at `now` (then it can be forgotten without changing anything). */
export const isFull = (state: TokenBucket, options: BucketOptions, now: number): boolean =>
  refill(state, options, now).tokens + EPSILON >= Math.max(1, options.capacity)

// ---------------------------------------------------------------------------------------------
// In-process service

export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly retryAfterSeconds: number }> {}

export interface RateLimiterService {
  /** Takes one token from the bucket of `key`, or fails with the seconds to wait. */
  readonly consume: (key: string, options: BucketOptions) => Effect.Effect<void, RateLimited>
  /** Whether the bucket of `key` has a token now, without taking it; fails with the seconds to wait. */
  readonly peek: (key: string, options: BucketOptions) => Effect.Effect<void, RateLimited>
  /** Number of buckets currently kept (for metrics and tests). */
  readonly size: Effect.Effect<number>
}

export class RateLimiter extends Context.Tag("RateLimiter")<RateLimiter, RateLimiterService>() {}

export const DEFAULT_MAX_KEYS = 10_000

interface Entry {
  readonly bucket: TokenBucket
  readonly options: BucketOptions
}

/**
 * Makes a limiter. `maxKeys` bounds the number of buckets kept: when exceeded, full buckets are
 * dropped, then the least recently used ones until the map is back at 90% of the bound.
 */
export const makeRateLimiter = (config: { readonly maxKeys?: number } = {}): Effect.Effect<RateLimiterService> =>
  Effect.gen(function*() {
    const maxKeys = Math.max(1, config.maxKeys ?? DEFAULT_MAX_KEYS)
    const buckets = yield* Ref.make(new Map<string, Entry>())

    const evict = (map: Map<string, Entry>, now: number): void => {
      for (const [key, entry] of map) if (isFull(entry.bucket, entry.options, now)) map.delete(key)
      const target = Math.max(1, Math.floor(maxKeys * 0.9))
      // Map iteration follows insertion order and `consume` re-inserts on use: oldest use first.
      for (const key of map.keys()) {
        if (map.size <= target) break
        map.delete(key)
      }
    }

    const consume = (key: string, options: BucketOptions): Effect.Effect<void, RateLimited> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.modify(buckets, (map) => {
          const result = take(map.get(key)?.bucket, options, now)
          map.delete(key)
          map.set(key, { bucket: result.state, options })
          if (map.size > maxKeys) evict(map, now)
          return [result, map] as const
        })).pipe(
          Effect.flatMap((result) =>
            result.allowed ? Effect.void : Effect.fail(new RateLimited({ retryAfterSeconds: result.retryAfterSeconds }))
          )
        )

    const peek = (key: string, options: BucketOptions): Effect.Effect<void, RateLimited> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(Ref.get(buckets), (map) => take(map.get(key)?.bucket, options, now))).pipe(
          Effect.flatMap((result) =>
            result.allowed ? Effect.void : Effect.fail(new RateLimited({ retryAfterSeconds: result.retryAfterSeconds }))
          )
        )

    return RateLimiter.of({ consume, peek, size: Effect.map(Ref.get(buckets), (map) => map.size) })
  })

/** The in-process limiter with the default bound. */
export const RateLimiterLive: Layer.Layer<RateLimiter> = Layer.effect(RateLimiter, makeRateLimiter())

/** The in-process limiter with a custom bound on the number of keys. */
export const rateLimiterLayer = (config: { readonly maxKeys?: number }): Layer.Layer<RateLimiter> =>
  Layer.effect(RateLimiter, makeRateLimiter(config))
