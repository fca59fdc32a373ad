/** The rate-limiter port: token buckets keyed by string (e.g. the API key); the server's is `SqlRateLimiter`. */
import { Context, Data, type Effect } from "effect"
import type { BucketOptions } from "./model/token-bucket.ts"

export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly retryAfterSeconds: number }> {}

export interface RateLimiterService {
  /** Takes one token from the bucket of `key`, or fails with the seconds to wait. */
  readonly consume: (key: string, options: BucketOptions) => Effect.Effect<void, RateLimited>
  readonly peek: (key: string, options: BucketOptions) => Effect.Effect<void, RateLimited>
  readonly size: Effect.Effect<number>
}

export class RateLimiter extends Context.Tag("RateLimiter")<RateLimiter, RateLimiterService>() {}
