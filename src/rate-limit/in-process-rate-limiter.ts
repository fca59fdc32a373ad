/** A `RateLimiter` keeping its buckets in this process, on the Effect `Clock`: one budget per process. */
import { Clock, Effect, Ref } from "effect"
import { type Availability, type BucketOptions, isFull, peek, take, type TokenBucket } from "./model/token-bucket.ts"
import { RateLimited, RateLimiter, type RateLimiterService } from "./rate-limiter.ts"

export const DEFAULT_MAX_KEYS = 10_000

interface Entry {
  readonly bucket: TokenBucket
  readonly options: BucketOptions
}

const answer = (result: Availability): Effect.Effect<void, RateLimited> =>
  result.allowed ? Effect.void : Effect.fail(new RateLimited({ retryAfterSeconds: result.retryAfterSeconds }))

/** Past `maxKeys` buckets, the full ones go, then the least recently used, down to 90% of the bound. */
export const makeInProcessRateLimiter = Effect.fnUntraced(function*(
  config: { readonly maxKeys?: number } = {}
): Effect.fn.Return<RateLimiterService> {
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
      })).pipe(Effect.flatMap(answer))

  const peekKey = (key: string, options: BucketOptions): Effect.Effect<void, RateLimited> =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => Effect.map(Ref.get(buckets), (map) => peek(map.get(key)?.bucket, options, now))
    ).pipe(Effect.flatMap(answer))

  return RateLimiter.of({
    consume,
    peek: peekKey,
    size: Effect.map(Ref.get(buckets), (map) => map.size)
  })
})
