/**
 * Idempotent POSTs under concurrency: 50 identical creates at once make one session (the rest are
 * in-flight 409s or replays), a claim left by a crashed process answers 409 until its lease runs
 * out, and two application instances ("processes") sharing one database — embedded PGlite, and
 * PostgreSQL when TEST_DATABASE_URL is set — create one session and charge the card once.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Redacted, TestClock } from "effect"
import { Api } from "../../src/app/api.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { IDEMPOTENCY_LEASE_MILLIS, idempotentRoutes } from "../../src/idempotency/http/middleware.ts"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { requestFingerprint } from "../../src/idempotency/model/idempotency.ts"
import { SqlIdempotencyStore } from "../../src/idempotency/store/sql-idempotency-store.ts"
import { apiKeyId } from "../../src/platform/http/security.ts"
import { deriveVaultKeys } from "../../src/platform/key-derivation.ts"
import { API_KEY, API_VERSION, paymentData, post, testApp } from "../support/http.ts"
import { testConfig } from "../support/test-config.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "../support/test-database.ts"
import {
  countingPayments,
  createBody,
  expectIdempotencyError,
  isReplay,
  memoryCheckoutStore,
  memoryIdempotencyStore,
  reserved,
  run,
  withKey
} from "./idempotency-api-fixtures.ts"

/** The request fingerprint key of the test configuration's VAULT_KEY. */
const testFingerprintKey =
  Either.getOrThrow(deriveVaultKeys(Redacted.value(testConfig().vaultKey))).requestFingerprintKey

describe("in flight, concurrency and the lease", () => {
  it.effect("50 concurrent identical creates: one session, the rest in-flight 409s or replays", () =>
    Effect.gen(function*() {
      const store = yield* memoryCheckoutStore
      yield* run(
        Effect.gen(function*() {
          const responses = yield* Effect.forEach(
            Array.from({ length: 50 }, (_, i) => i),
            () => post("/checkout_sessions", createBody, withKey("burst-1")),
            { concurrency: "unbounded" }
          )
          const executed = responses.filter((r) => r.status === 201 && !isReplay(r))
          const replays = responses.filter((r) => r.status === 201 && isReplay(r))
          const inFlight = responses.filter((r) => r.status === 409)
          expect(executed).toHaveLength(1)
          expect(replays.length + inFlight.length).toBe(49)
          for (const replay of replays) expect(replay.text).toBe(executed[0]!.text)
          for (const response of inFlight) {
            expectIdempotencyError(response, "idempotency_in_flight")
            expect(response.headers.get("retry-after")).toBe("1")
          }
          expect(yield* reserved(store, "tshirt-classic")).toBe(2)
          // Afterwards every retry is a replay.
          const later = yield* post("/checkout_sessions", createBody, withKey("burst-1"))
          expect(isReplay(later)).toBe(true)
          expect(later.body.id).toBe(executed[0]!.body.id)
        }),
        { store: Layer.succeed(CheckoutStore, store) }
      )
    }))

  it.effect("a claim left by a crashed process answers 409 in_flight until its lease runs out, then runs", () =>
    Effect.gen(function*() {
      const idempotency = yield* memoryIdempotencyStore
      yield* run(
        Effect.gen(function*() {
          const now = yield* TestClock.currentTimeMillis
          // What a process that died after claiming leaves behind.
          yield* idempotency.claim(
            { keyId: apiKeyId(API_KEY), method: "POST", path: "/checkout_sessions", key: "crash-1" },
            {
              // As the route fingerprints it: with its API-Version where its rules follow the version.
              fingerprint: requestFingerprint(
                JSON.stringify(createBody),
                testFingerprintKey,
                idempotentRoutes(Api)("/checkout_sessions")?.versioned === true ? API_VERSION : undefined
              ),
              claimId: "dead-process",
              now,
              leaseUntil: now + IDEMPOTENCY_LEASE_MILLIS,
              expiresAt: now + 86_400_000
            }
          )
          const blocked = yield* post("/checkout_sessions", createBody, withKey("crash-1"))
          expectIdempotencyError(blocked, "idempotency_in_flight")
          expect(blocked.headers.get("retry-after")).toBe("1")
          expect(blocked.headers.get("idempotency-key")).toBe("crash-1")
          // Another body is a conflict even while in flight.
          const other = yield* post("/checkout_sessions", { items: [] }, withKey("crash-1"))
          expectIdempotencyError(other, "idempotency_conflict")

          yield* TestClock.adjust(IDEMPOTENCY_LEASE_MILLIS)
          const retried = yield* post("/checkout_sessions", createBody, withKey("crash-1"))
          expect(retried.status).toBe(201)
          expect(isReplay(retried)).toBe(false)
          const replay = yield* post("/checkout_sessions", createBody, withKey("crash-1"))
          expect(isReplay(replay)).toBe(true)
          expect(replay.body.id).toBe(retried.body.id)
        }),
        { idempotencyStore: Layer.succeed(IdempotencyStore, idempotency) }
      )
    }))
})

// ---------------------------------------------------------------------------------------------
// Two application instances (two "processes") sharing one database

const sharedDatabaseSuite = (name: string, database: () => TestDatabase) =>
  describe(name, () => {
    it.scopedLive("concurrent identical creates across two instances: one session, the rest 409s or replays", () =>
      Effect.gen(function*() {
        const db = yield* Layer.build(database())
        const payments = countingPayments()
        const instance = () =>
          Layer.build(testApp({
            store: SqlCheckoutStore.pipe(Layer.provide(Layer.succeedContext(db))),
            idempotencyStore: SqlIdempotencyStore.pipe(Layer.provide(Layer.succeedContext(db))),
            payments: payments.layer
          }))
        const a = yield* instance()
        const b = yield* instance()
        const on = (ctx: Context.Context<any>) =>
        <A, E>(effect: Effect.Effect<A, E, any>) =>
          Effect.provide(effect, ctx) as Effect.Effect<A, E, never>

        const responses = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => on(i % 2 === 0 ? a : b)(post("/checkout_sessions", createBody, withKey("shared-1"))),
          { concurrency: "unbounded" }
        )
        const executed = responses.filter((r) => r.status === 201 && !isReplay(r))
        const replays = responses.filter((r) => r.status === 201 && isReplay(r))
        const inFlight = responses.filter((r) => r.status === 409)
        expect(executed).toHaveLength(1)
        expect(replays.length + inFlight.length).toBe(49)
        for (const replay of replays) expect(replay.body.id).toBe(executed[0]!.body.id)
        for (const response of inFlight) expectIdempotencyError(response, "idempotency_in_flight")

        const sql = Context.get(db, SqlClient.SqlClient)
        const sessions = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM checkout_sessions`
        expect(sessions[0]!.n).toBe(1)

        // Complete on A; the retry on B is a replay and the card was charged once.
        const sessionId = executed[0]!.body.id as string
        const path = `/checkout_sessions/${sessionId}/complete`
        const completed = yield* on(a)(post(path, { payment_data: paymentData }, withKey("shared-2")))
        expect(completed.status).toBe(200)
        const retried = yield* on(b)(post(path, { payment_data: paymentData }, withKey("shared-2")))
        expect(retried.status).toBe(200)
        expect(isReplay(retried)).toBe(true)
        expect(retried.body.order.id).toBe(completed.body.order.id)
        expect(payments.calls).toHaveLength(1)
      }), { timeout: 60_000 })
  })

sharedDatabaseSuite("two instances on one embedded PGlite database", () => embeddedDatabase())

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  sharedDatabaseSuite("two instances on one PostgreSQL database", () => postgresDatabase())
})
