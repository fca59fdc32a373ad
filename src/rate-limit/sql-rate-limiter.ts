/**
 * `RateLimiter` over PostgreSQL (table `rate_limit_buckets`, migration 0012): the token bucket of
 * `token-bucket.ts`, one row per key, shared by every process on the database (CONTRACT §1: a
 * budget "per API key" is one budget however many processes serve it). One statement per check:
 * `rate_limit_take` (`src/db/functions/rate-limit-take.ts`) creates, locks, refills and takes in
 * the database, with the capacity and rate the bucket rule derives from the options
 * (`bucketCapacity`, `refillPerMs`); whether that was allowed, and the Retry-After, are decided
 * here from the tokens it saw (`availability`).
 *
 * Time is the process's `Clock`, passed as a parameter, as everywhere in the stores. When the
 * database cannot answer, the request is let through (logged): a rate limit protects, it does not
 * decide, and the request's own storage work answers 503 the same way.
 *
 * A bucket that has refilled completely is the same as an absent one: a sweep deletes those rows
 * every minute (`FOR UPDATE SKIP LOCKED`, safe with several processes).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { forkBatchSweep, sweepInBatches } from "../platform/batch-sweep.ts"
import { RateLimited, RateLimiter } from "./rate-limiter-service.ts"
import { availability, bucketCapacity, type BucketOptions, refillPerMs } from "./token-bucket.ts"

export const RATE_LIMIT_SWEEP_BATCH = 500

export const makeSqlRateLimiter = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Tokens the bucket of `key` holds now (taking one when `takeToken` and there is one). */
  const tokensOf = (key: string, options: BucketOptions, takeToken: boolean, now: number) =>
    Effect.map(
      sql<{ readonly tokens: number | string }>`
        SELECT rate_limit_take(${key}, ${bucketCapacity(options)}, ${
        refillPerMs(options)
      }, ${now}, ${takeToken}) AS tokens`,
      (rows) => Number(rows[0]!.tokens)
    )

  const check = (key: string, options: BucketOptions, takeToken: boolean) =>
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => tokensOf(key, options, takeToken, now)),
      Effect.map((tokens) => availability(tokens, options)),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning("rate limit unavailable: request let through", error.message), {
          allowed: true,
          retryAfterSeconds: 0
        })
      ),
      Effect.flatMap((result) =>
        result.allowed ? Effect.void : Effect.fail(new RateLimited({ retryAfterSeconds: result.retryAfterSeconds }))
      )
    )

  const deleteFullBuckets = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const deleted = yield* sql`
      DELETE FROM rate_limit_buckets WHERE bucket_key IN (
        SELECT bucket_key FROM rate_limit_buckets WHERE full_at <= ${now}
        ORDER BY full_at LIMIT ${RATE_LIMIT_SWEEP_BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING 1 AS deleted`
    return deleted.length
  })
  const sweepOnce = sweepInBatches(deleteFullBuckets, RATE_LIMIT_SWEEP_BATCH)

  const limiter = RateLimiter.of({
    consume: (key, options) => check(key, options, true),
    peek: (key, options) => check(key, options, false),
    size: sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM rate_limit_buckets`.pipe(
      Effect.map((rows) => rows[0]!.n),
      Effect.orElseSucceed(() => 0)
    )
  })
  return { limiter, sweepOnce, deleteFullBuckets }
})

/** The shared limiter, with its sweep of full buckets every minute. Needs a migrated database. */
export const SqlRateLimiter = Layer.scoped(
  RateLimiter,
  Effect.gen(function*() {
    const { deleteFullBuckets, limiter } = yield* makeSqlRateLimiter
    yield* forkBatchSweep({
      batch: deleteFullBuckets,
      batchSize: RATE_LIMIT_SWEEP_BATCH,
      every: "1 minute",
      logFailure: { message: "rate limit clean-up failed", detail: (error) => error.message }
    })
    return limiter
  })
)
