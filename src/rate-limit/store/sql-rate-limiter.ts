/**
 * `RateLimiter` over PostgreSQL (table `rate_limit_buckets`, migration 0012): the token bucket of
 * `token-bucket.ts`, one row per key, shared by every process on the database (CONTRACT §1: a
 * budget "per API key" is one budget however many processes serve it). One statement per check
 * that asks the database: `rate_limit_take_up_to` (`src/db/functions/rate-limit-take.ts`)
 * creates, locks, refills and takes in the database, with the capacity and rate the bucket rule
 * derives from the options (`bucketCapacity`, `refillPerMs`); whether that was allowed, and the
 * Retry-After, are decided here from the tokens it saw (`availability`).
 *
 * Leases: a bucket of at least `LEASE_PER_CAPACITY` × 2 tokens gives a process up to one token in
 * `LEASE_PER_CAPACITY` of its capacity at once (at most `MAX_LEASE`), as `takeUpTo` takes them;
 * the process spends the ones past the first on the key's next requests without a statement,
 * for at most `LEASE_MS`, and drops what is left then; one lease per key is taken at a time
 * (requests missing it meanwhile wait for it, see `leasing`). Every request let through took a token
 * from the shared bucket, so the budget is never exceeded, however many processes share it; a
 * process can hold back at most that share of the burst, for at most that long. Small budgets
 * (the discount-code guard, the defaults of a few per second) get no lease: exact, as before.
 *
 * Time is the process's `Clock`, passed as a parameter, as everywhere in the stores. When the
 * database cannot answer, the request is let through (logged): a rate limit protects, it does not
 * decide, and the request's own storage work answers 503 the same way.
 *
 * A bucket that has refilled completely is the same as an absent one: a sweep deletes those rows
 * every minute (`FOR UPDATE SKIP LOCKED`, safe with several processes).
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
/** The most tokens one lease takes. */
export const MAX_LEASE = 16
/** How long a process may spend a lease's tokens. */
export const LEASE_MS = 1_000
/** Keys with a lease kept; past this, expired leases are dropped. */
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

  /**
   * Tokens the bucket of `key` holds now, before taking up to `count` (0: only looks), at `now`;
   * one statement. Exposed for the test that holds it to `takeUpTo`.
   */
  const tokensOf = (key: string, options: BucketOptions, count: number, now: number) =>
    Effect.map(
      sql<{ readonly tokens: number | string }>`
        SELECT rate_limit_take_up_to(${key}, ${bucketCapacity(options)}, ${
        refillPerMs(options)
      }, ${now}, ${count}) AS tokens`,
      (rows) => Number(rows[0]!.tokens)
    )

  /** A token of this process's lease on `key` at `now`, if it holds one (then spent when `spend`). */
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

  /** Keeps the tokens taken past the one spent now, for `LEASE_MS` (the key had none left). */
  const keepLease = (key: string, extra: number, now: number) => {
    if (extra <= 0) return
    if (leases.size >= MAX_LEASED_KEYS) {
      for (const [k, lease] of leases) if (lease.until <= now || lease.tokens < 1) leases.delete(k)
      if (leases.size >= MAX_LEASED_KEYS) return
    }
    leases.set(key, { tokens: extra, until: now + LEASE_MS })
  }

  /**
   * What the statement for `count` tokens of `key` at `now` allowed; `unanswered` when the
   * database could not say (the request is let through).
   */
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

  /**
   * Leases being taken, by key: one statement per key and process at a time. A request missing
   * the lease meanwhile waits for that statement, then: refused as it was (the bucket had no
   * token for it then), let through as it was when the database could not answer, else a token
   * of the lease, or the next lease (taken or waited for) when this one is spent.
   */
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
