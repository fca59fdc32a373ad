/**
 * The rate-limiter port: token buckets (`token-bucket.ts`) keyed by string (e.g. the API key),
 * kept by an implementation. The server's is `SqlRateLimiter` (one budget shared by every process
 * on the database); `makeInProcessRateLimiter` keeps buckets in this process only.
 */
import { Context, Data, type Effect } from "effect"
import type { BucketOptions } from "./model/token-bucket.ts"

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
