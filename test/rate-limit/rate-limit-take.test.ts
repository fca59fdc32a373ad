/**
 * The database function `rate_limit_take_up_to` and the token bucket of
 * `src/rate-limit/model/token-bucket.ts` are the same rule written twice (the SQL limiter must refill and
 * take in one statement). This runs both on the same random sequences of (time, take one, take
 * several, or peek, capacity, rate) and requires the same answers, bit for bit: allowed or not,
 * Retry-After, how many were taken, and the tokens and time the bucket keeps. It goes through
 * `SqlRateLimiter` (the parameters it derives, the statement, the answer it decides: `consume` and
 * `peek` for buckets too small for a lease, `tokensOf` for takes of several tokens, as a lease
 * takes them), on embedded PGlite and, when `TEST_DATABASE_URL` is set, on PostgreSQL.
 *
 * It also checks what the sweep relies on: at the `full_at` the function stores, the bucket rule
 * says the bucket is full (deleting the row then changes nothing).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, Runtime, TestClock } from "effect"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import {
  type Availability,
  type BucketOptions,
  isFull,
  peek,
  take,
  takeUpTo,
  type TokenBucket
} from "../../src/rate-limit/model/token-bucket.ts"
import type { RateLimiterService } from "../../src/rate-limit/rate-limiter.ts"
import { makeSqlRateLimiter } from "../../src/rate-limit/store/sql-rate-limiter.ts"

type TokensOf = Effect.Effect.Success<typeof makeSqlRateLimiter>["tokensOf"]
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"

/** Never swept: what the function stores as `full_at` when the rate is not positive. */
const NEVER = "9223372036854775807"

const capacity = fc.oneof(
  fc.integer({ min: 0, max: 60 }),
  fc.double({ min: 0, max: 60, noNaN: true }),
  fc.constant(1)
)
const refillPerSecond = fc.oneof(
  fc.integer({ min: 1, max: 600 }).map((perMinute) => perMinute / 60),
  fc.double({ min: 1e-6, max: 1_000, noNaN: true }),
  fc.constantFrom(0, -1, 1 / 30, 0.1, 1, 2),
  // Near zero: the bucket is never full again within the range of `full_at`.
  fc.oneof(fc.double({ min: 1e-20, max: 1e-6, noNaN: true }), fc.constantFrom(1e-17, 1e-300))
)
const bucketOptions: fc.Arbitrary<BucketOptions> = fc.record({ capacity, refillPerSecond })

interface Step {
  /** Milliseconds since the previous step; negative when the clock goes backwards. */
  readonly elapsedMs: number
  readonly op: "consume" | "peek" | "take_several"
  /** How many a `take_several` asks for. */
  readonly count: number
  /** Index into the sequence's options: the same key may be checked with other options. */
  readonly optionsIndex: number
}

const step: fc.Arbitrary<Step> = fc.record({
  elapsedMs: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 2_000 }) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 120_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: -5_000, max: 0 }) }
  ),
  op: fc.constantFrom("consume", "consume", "consume", "peek", "take_several"),
  count: fc.integer({ min: 2, max: 20 }),
  optionsIndex: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) })
})

interface Sequence {
  readonly start: number
  readonly options: readonly [BucketOptions, BucketOptions]
  readonly steps: ReadonlyArray<Step>
}

const sequence: fc.Arbitrary<Sequence> = fc.record({
  start: fc.integer({ min: 0, max: 2 ** 42 }),
  options: fc.tuple(bucketOptions, bucketOptions),
  steps: fc.array(step, { minLength: 1, maxLength: 30 })
})

const answerOf = (effect: Effect.Effect<void, { readonly retryAfterSeconds: number }>) =>
  Effect.map(Effect.either(effect), (result): Availability =>
    Either.isRight(result)
      ? { allowed: true, retryAfterSeconds: 0 }
      : { allowed: false, retryAfterSeconds: result.left.retryAfterSeconds })

/** One sequence on one fresh key: the SQL limiter and the bucket rule side by side. */
const runSequence = (
  { limiter, tokensOf }: { readonly limiter: RateLimiterService; readonly tokensOf: TokensOf },
  input: Sequence
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = `property:${randomUUID()}`
    const stored = Effect.map(
      sql<{ tokens: number; updated_at: string; full_at: string }>`
        SELECT tokens, updated_at, full_at FROM rate_limit_buckets WHERE bucket_key = ${key}`,
      (rows) => rows[0]
    )
    let model: TokenBucket | undefined
    /** The options of the last write: `full_at` was computed with them. */
    let writtenWith: BucketOptions | undefined
    let now = input.start
    for (const [index, { count, elapsedMs, op, optionsIndex }] of input.steps.entries()) {
      now = Math.max(0, now + elapsedMs)
      const options = input.options[optionsIndex]!
      yield* TestClock.setTime(now)
      const context = { index, op, count, now, options, model }

      if (op === "take_several") {
        const expected = takeUpTo(model, options, now, count)
        const tokens = yield* Effect.orDie(tokensOf(key, options, count, now))
        const { allowed, retryAfterSeconds, taken } = takeUpTo({ tokens, updatedAt: now }, options, now, count)
        expect({ allowed, retryAfterSeconds, taken }, JSON.stringify(context)).toEqual({
          allowed: expected.allowed,
          retryAfterSeconds: expected.retryAfterSeconds,
          taken: expected.taken
        })
        model = expected.state
        if (allowed) writtenWith = options
      } else if (op === "peek") {
        expect(yield* answerOf(limiter.peek(key, options)), JSON.stringify(context)).toEqual(peek(model, options, now))
      } else {
        const expected = take(model, options, now)
        const { allowed, retryAfterSeconds } = expected
        expect(yield* answerOf(limiter.consume(key, options)), JSON.stringify(context)).toEqual({
          allowed,
          retryAfterSeconds
        })
        model = expected.state
        if (allowed) writtenWith = options
      }

      const row = yield* stored
      if (model === undefined) {
        expect(row, JSON.stringify(context)).toBeUndefined()
        continue
      }
      expect(row, JSON.stringify(context)).toBeDefined()
      expect({ tokens: row!.tokens, updatedAt: Number(row!.updated_at) }, JSON.stringify(context)).toEqual(model)
      if (row!.full_at !== NEVER) {
        expect(isFull(model, writtenWith!, Number(row!.full_at)), JSON.stringify({ ...context, row })).toBe(true)
      }
    }
  })

const agreementContract = (name: string, database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(Layer.orDie(database), { timeout: 60_000 })(name, (it) => {
    it.effect("rate_limit_take_up_to answers as the token bucket, bit for bit", () =>
      Effect.gen(function*() {
        const limiter = yield* makeSqlRateLimiter
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(sequence, (input) => Runtime.runPromise(runtime)(runSequence(limiter, input))),
            { numRuns: 60 }
          )
        )
      }), 120_000)
  })

agreementContract("rate_limit_take_up_to on embedded PGlite", embeddedDatabase())
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  agreementContract("rate_limit_take_up_to on PostgreSQL", postgresDatabase())
})
