/**
 * The `RateLimiter` contract on the in-process limiter, the SQL one on embedded PGlite, and the SQL
 * one on PostgreSQL (only when `TEST_DATABASE_URL` is set): the same token bucket everywhere, and,
 * for SQL, one budget shared by every limiter on the database (every process).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import { randomUUID } from "node:crypto"
import type { BucketOptions } from "../../src/rate-limit/model/token-bucket.ts"
import { RateLimited, RateLimiter } from "../../src/rate-limit/rate-limiter.ts"
import {
  LEASE_MS,
  leaseSize,
  makeSqlRateLimiter,
  MAX_LEASE,
  SqlRateLimiter
} from "../../src/rate-limit/store/sql-rate-limiter.ts"
import { InProcessRateLimiter } from "../doubles/in-process-rate-limiter.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"

const key = (name: string) => `${name}:${randomUUID()}`
const three: BucketOptions = { capacity: 3, refillPerSecond: 2 }

const consume = (k: string, options = three) => Effect.flatMap(RateLimiter, (limiter) => limiter.consume(k, options))
const peek = (k: string, options = three) => Effect.flatMap(RateLimiter, (limiter) => limiter.peek(k, options))
const allowed = <R>(effect: Effect.Effect<void, RateLimited, R>) => Effect.map(Effect.either(effect), Either.isRight)

const rateLimiterContract = (name: string, limiterLayer: Layer.Layer<RateLimiter, unknown>) =>
  layer(Layer.orDie(limiterLayer))(name, (it) => {
    it.effect("a burst of `capacity`, then 429 with Retry-After, then refilled with time", () =>
      Effect.gen(function*() {
        const k = key("burst")
        for (let i = 0; i < 3; i++) yield* consume(k)
        const denied = yield* Effect.flip(consume(k))
        expect(denied).toBeInstanceOf(RateLimited)
        expect(denied.retryAfterSeconds).toBe(1)
        yield* TestClock.adjust("500 millis")
        expect(yield* allowed(consume(k))).toBe(true)
        expect(yield* allowed(consume(k))).toBe(false)
        yield* TestClock.adjust("1 minute")
        for (let i = 0; i < 3; i++) yield* consume(k)
        expect(yield* allowed(consume(k))).toBe(false)
      }))

    it.effect("Retry-After follows a slow refill; peek looks without taking", () =>
      Effect.gen(function*() {
        const k = key("slow")
        const slow = { capacity: 1, refillPerSecond: 1 / 30 }
        expect(yield* allowed(peek(k, slow))).toBe(true)
        expect(yield* allowed(peek(k, slow))).toBe(true)
        yield* consume(k, slow)
        expect((yield* Effect.flip(peek(k, slow))).retryAfterSeconds).toBe(30)
        yield* TestClock.adjust("20 seconds")
        expect((yield* Effect.flip(consume(k, slow))).retryAfterSeconds).toBe(10)
        yield* TestClock.adjust("10 seconds")
        yield* consume(k, slow)
      }))

    it.effect("keys are independent", () =>
      Effect.gen(function*() {
        const [a, b] = [key("a"), key("b")]
        const one = { capacity: 1, refillPerSecond: 1 }
        yield* consume(a, one)
        expect(yield* allowed(consume(a, one))).toBe(false)
        yield* consume(b, one)
      }))

    it.effect("concurrent requests on one key: exactly `capacity` get through", () =>
      Effect.gen(function*() {
        const k = key("concurrent")
        const ten = { capacity: 10, refillPerSecond: 0.001 }
        const results = yield* Effect.all(Array.from({ length: 40 }, () => allowed(consume(k, ten))), {
          concurrency: "unbounded"
        })
        expect(results.filter(Boolean)).toHaveLength(10)
      }))
  })

/** The SQL limiter's own guarantees: one budget across limiters (processes), and the sweep. */
const sharedBudgetContract = (name: string, database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(Layer.orDie(database))(name, (it) => {
    it.effect("two limiters on one database (two processes) share one budget", () =>
      Effect.gen(function*() {
        const first = (yield* makeSqlRateLimiter).limiter
        const second = (yield* makeSqlRateLimiter).limiter
        const k = key("shared")
        const results = [
          yield* allowed(first.consume(k, three)),
          yield* allowed(second.consume(k, three)),
          yield* allowed(first.consume(k, three)),
          yield* allowed(second.consume(k, three))
        ]
        expect(results).toEqual([true, true, true, false])
      }))

    it.effect("a large bucket is leased: one statement takes a share, spent here without asking", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const first = (yield* makeSqlRateLimiter).limiter
        const second = (yield* makeSqlRateLimiter).limiter
        const k = key("leased")
        const large = { capacity: 1_000, refillPerSecond: 0 }
        expect(leaseSize(large)).toBe(MAX_LEASE)
        const stored = Effect.map(
          sql<{ tokens: number }>`SELECT tokens FROM rate_limit_buckets WHERE bucket_key = ${k}`,
          (rows) => rows[0]?.tokens
        )
        yield* first.consume(k, large)
        expect(yield* stored).toBe(1_000 - MAX_LEASE)
        for (let i = 1; i < MAX_LEASE; i++) yield* first.consume(k, large)
        expect(yield* stored).toBe(1_000 - MAX_LEASE) // the lease, spent without a statement
        yield* first.consume(k, large)
        yield* second.consume(k, large)
        expect(yield* stored).toBe(1_000 - 3 * MAX_LEASE)
        // What is left of a lease after LEASE_MS is dropped: the next request asks again.
        yield* TestClock.adjust(LEASE_MS)
        yield* first.consume(k, large)
        expect(yield* stored).toBe(1_000 - 4 * MAX_LEASE)
        // A small budget is never leased: exact.
        expect(leaseSize({ capacity: 99, refillPerSecond: 1 })).toBe(1)
      }))

    it.effect("a process of the previous release (rate_limit_take) spends the same budget", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { limiter } = yield* makeSqlRateLimiter
        const k = key("previous_release")
        const previous = (take: boolean) =>
          Effect.map(
            sql<{ tokens: number }>`SELECT rate_limit_take(${k}, 3, 0, 0, ${take}) AS tokens`,
            (rows) => rows[0]!.tokens
          )
        expect(yield* previous(true)).toBe(3)
        yield* limiter.consume(k, { capacity: 3, refillPerSecond: 0 })
        expect(yield* previous(false)).toBe(1)
        expect(yield* previous(true)).toBe(1)
        expect(yield* allowed(limiter.consume(k, { capacity: 3, refillPerSecond: 0 }))).toBe(false)
      }))

    it.effect("concurrent misses wait for the one lease being taken: one statement per lease", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { limiter } = yield* makeSqlRateLimiter
        const k = key("lease_once")
        const large = { capacity: 1_000, refillPerSecond: 0 }
        const stored = Effect.map(
          sql<{ tokens: number }>`SELECT tokens FROM rate_limit_buckets WHERE bucket_key = ${k}`,
          (rows) => rows[0]?.tokens
        )
        const together = (n: number) =>
          Effect.all(Array.from({ length: n }, () => allowed(limiter.consume(k, large))), { concurrency: "unbounded" })
        expect(yield* together(8)).toEqual(Array(8).fill(true))
        expect(yield* stored).toBe(1_000 - MAX_LEASE)
        for (let i = 8; i < MAX_LEASE; i++) yield* limiter.consume(k, large)
        expect(yield* stored).toBe(1_000 - MAX_LEASE) // the rest of that lease, without a statement
        // More at once than a lease holds: those it leaves out take the next lease between them.
        expect(yield* together(2 * MAX_LEASE + 3)).toEqual(Array(2 * MAX_LEASE + 3).fill(true))
        expect(yield* stored).toBe(1_000 - 4 * MAX_LEASE)
      }))

    it.effect("requests waiting for a lease the bucket refuses are refused with it", () =>
      Effect.gen(function*() {
        const { limiter } = yield* makeSqlRateLimiter
        const k = key("lease_refused")
        const budget = { capacity: 100, refillPerSecond: 0 }
        expect(leaseSize(budget)).toBe(2)
        const results = yield* Effect.all(
          Array.from({ length: 150 }, () => allowed(limiter.consume(k, budget))),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Boolean)).toHaveLength(100)
        const refused = yield* Effect.flip(limiter.consume(k, budget))
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      }))

    it.effect("with leases, processes together never get more than the budget", () =>
      Effect.gen(function*() {
        const limiters = [(yield* makeSqlRateLimiter).limiter, (yield* makeSqlRateLimiter).limiter]
        const k = key("leased_budget")
        const budget = { capacity: 250, refillPerSecond: 0 }
        expect(leaseSize(budget)).toBe(5)
        const results = yield* Effect.all(
          Array.from({ length: 400 }, (_, i) => allowed(limiters[i % 2]!.consume(k, budget))),
          { concurrency: 8 }
        )
        expect(results.filter(Boolean)).toHaveLength(250)
        expect(yield* allowed(limiters[0]!.peek(k, budget))).toBe(false)
      }))

    it.effect("the sweep deletes buckets that have refilled completely, and only those", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { limiter, sweepOnce } = yield* makeSqlRateLimiter
        const [refilled, draining] = [key("refilled"), key("draining")]
        yield* limiter.consume(refilled, { capacity: 2, refillPerSecond: 1 })
        yield* limiter.consume(draining, { capacity: 2, refillPerSecond: 0.01 })
        yield* TestClock.adjust("2 seconds")
        yield* sweepOnce
        const rows = yield* sql<{ bucket_key: string }>`
          SELECT bucket_key FROM rate_limit_buckets WHERE bucket_key IN (${refilled}, ${draining})`
        expect(rows.map((r) => r.bucket_key)).toEqual([draining])
        // A swept bucket is a full one: its budget is whole again.
        yield* limiter.consume(refilled, { capacity: 2, refillPerSecond: 1 })
        yield* limiter.consume(refilled, { capacity: 2, refillPerSecond: 1 })
      }))
  })

rateLimiterContract("RateLimiter: in process", InProcessRateLimiter)
rateLimiterContract("RateLimiter: SQL on embedded PGlite", SqlRateLimiter.pipe(Layer.provide(embeddedDatabase())))
sharedBudgetContract("SQL rate limits on embedded PGlite", embeddedDatabase())
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  rateLimiterContract("RateLimiter: SQL on PostgreSQL", SqlRateLimiter.pipe(Layer.provide(postgresDatabase())))
  sharedBudgetContract("SQL rate limits on PostgreSQL", postgresDatabase())
})
