/**
 * `RateLimiter` over PostgreSQL: one budget per key for all processes (`docs/decisions.md`, "Rate limits").
 * When the database cannot answer, the request is let through: a rate limit protects, it does not decide.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Deferred, Effect, Exit, FiberId, Layer } from "effect"
import { forkBatchSweep, sweepInBatches } from "../../platform/batch-sweep.ts"
import {
  type Availability,
  availability,
  bucketCapacity,
  type BucketOptions,
  refillPerMs,
  takeUpTo
} from "../model/token-bucket.ts"
import { RateLimited, RateLimiter } from "../rate-limiter.ts"

export const RATE_LIMIT_SWEEP_BATCH = 500
/** A lease is at most one token in this many of the bucket's capacity. */
export const LEASE_PER_CAPACITY = 50
export const MAX_LEASE = 16
export const LEASE_MS = 1_000
const MAX_LEASED_KEYS = 1_000

/** How many tokens one statement takes for a bucket with these options (1: no lease). */
export const leaseSize = (options: BucketOptions): number =>
  Math.max(1, Math.min(MAX_LEASE, Math.floor(bucketCapacity(options) / LEASE_PER_CAPACITY)))

interface Answer extends Availability {
  readonly unanswered: boolean
}

const AGAIN: Answer = { allowed: true, retryAfterSeconds: 0, unanswered: false }

interface Lease {
  tokens: number
  readonly until: number
}

export const makeSqlRateLimiter = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const leases = new Map<string, Lease>()

  /** Tokens the bucket held before taking up to `count` (0: only looks); exposed for the test against `takeUpTo`. */
  const tokensOf = (key: string, options: BucketOptions, count: number, now: number) =>
    Effect.map(
      sql<{ readonly tokens: number | string }>`
        SELECT rate_limit_take_up_to(${key}, ${bucketCapacity(options)}, ${
        refillPerMs(options)
      }, ${now}, ${count}) AS tokens`,
      (rows) => Number(rows[0]!.tokens)
    )

  const fromLease = (key: string, now: number, spend: boolean): boolean => {
    const lease = leases.get(key)
    if (lease === undefined) return false
    if (lease.until <= now || lease.tokens < 1) {
      leases.delete(key)
      return false
    }
    if (spend) lease.tokens -= 1
    return true
  }

  const keepLease = (key: string, extra: number, now: number) => {
    if (extra <= 0) return
    if (leases.size >= MAX_LEASED_KEYS) {
      for (const [k, lease] of leases) if (lease.until <= now || lease.tokens < 1) leases.delete(k)
      if (leases.size >= MAX_LEASED_KEYS) return
    }
    leases.set(key, { tokens: extra, until: now + LEASE_MS })
  }

  const ask = (key: string, options: BucketOptions, count: number, now: number) =>
    tokensOf(key, options, count, now).pipe(
      Effect.map((tokens): Answer => {
        if (count === 0) return { ...availability(tokens, options), unanswered: false }
        // What the statement took, by the bucket's own rule (the bucket as it saw it, at `now`).
        const took = takeUpTo({ tokens, updatedAt: now }, options, now, count)
        if (took.allowed) keepLease(key, took.taken - 1, now)
        return { allowed: took.allowed, retryAfterSeconds: took.retryAfterSeconds, unanswered: false }
      }),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning("rate limit unavailable: request let through", error.message), {
          allowed: true,
          retryAfterSeconds: 0,
          unanswered: true
        })
      )
    )

  const decide = (answer: Answer): Effect.Effect<void, RateLimited> =>
    answer.allowed ? Effect.void : Effect.fail(new RateLimited({ retryAfterSeconds: answer.retryAfterSeconds }))

  /** Leases being taken: one statement per key at a time, awaited by the requests that miss the lease meanwhile. */
  const leasing = new Map<string, Deferred.Deferred<Answer>>()

  const check = (key: string, options: BucketOptions, takeToken: boolean): Effect.Effect<void, RateLimited> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (fromLease(key, now, takeToken)) return Effect.void
      const size = takeToken ? leaseSize(options) : 0
      if (size <= 1) return Effect.flatMap(ask(key, options, size, now), decide)
      const taking = leasing.get(key)
      if (taking !== undefined) {
        return Effect.flatMap(
          Deferred.await(taking),
          (answer) => (answer.allowed && !answer.unanswered ? check(key, options, takeToken) : decide(answer))
        )
      }
      const done = Deferred.unsafeMake<Answer>(FiberId.none)
      leasing.set(key, done)
      return ask(key, options, size, now).pipe(
        Effect.onExit((exit) => {
          leasing.delete(key)
          // A leaser interrupted before its answer: the others look again.
          return Deferred.succeed(done, Exit.isSuccess(exit) ? exit.value : AGAIN)
        }),
        Effect.flatMap(decide)
      )
    })

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
  return { limiter, sweepOnce, deleteFullBuckets, tokensOf }
})

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
