/**
 * A claimed key's lease is renewed while its request runs (one loop per process,
 * `src/idempotency/claim-renewal.ts`): a retry during a request that outlasts the lease is still told
 * `in_flight`, never run a second time; once the request ends, its answer is replayed, and a
 * lease no longer renewed runs out.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema, TestClock } from "effect"
import { API_ID, withSharedErrors } from "../../src/platform/http/feature-api.ts"
import { Idempotent } from "../../src/platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion, ApiVersionLive, AuthorizationLive } from "../../src/platform/http/security.ts"
import { serveIdempotentApi } from "../support/idempotent-test-api.ts"

const Count = Schema.Struct({ count: Schema.Number })

class Slow extends HttpApiGroup.make("slow")
  .add(HttpApiEndpoint.post("run", "/slow/things").addSuccess(Count))
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
{}

const TestApi = withSharedErrors(HttpApi.make(API_ID).add(Slow))

const LEASE = 30_000
const RENEW_EVERY = 10_000

/** The test API with the idempotency middleware; its first run takes `firstRunMillis`. */
const serve = (firstRunMillis: number) =>
  Effect.gen(function*() {
    let runs = 0
    const ApiLive = HttpApiBuilder.api(TestApi).pipe(
      Layer.provide(HttpApiBuilder.group(TestApi, "slow", (handlers) =>
        handlers.handle("run", () =>
          Effect.suspend(() => {
            const count = ++runs
            return Effect.as(count === 1 ? Effect.sleep(firstRunMillis) : Effect.void, { count })
          })))),
      Layer.provide([AuthorizationLive, ApiVersionLive])
    )
    const served = yield* serveIdempotentApi(TestApi, ApiLive, {
      idempotency: { leaseMillis: LEASE, renewEveryMillis: RENEW_EVERY }
    })
    const post = (key: string) =>
      served.post("/slow/things", { key })
    return { post, runs: () => runs, store: served.store }
  })

describe("idempotency leases while a request runs", () => {
  it.scoped("a request outlasting its lease keeps it: the retry is in_flight, then replayed", () =>
    Effect.gen(function*() {
      const { post, runs } = yield* serve(3 * LEASE)
      const first = yield* Effect.fork(post("slow-1"))
      yield* TestClock.adjust(0)
      expect(runs()).toBe(1)
      // Twice the lease later, the claim is still held: renewed every RENEW_EVERY.
      yield* TestClock.adjust(2 * LEASE)
      const during = yield* post("slow-1")
      expect([during.status, during.body.code]).toEqual([409, "idempotency_in_flight"])
      expect(runs()).toBe(1)
      yield* TestClock.adjust(LEASE)
      const answered = yield* Fiber.join(first)
      expect([answered.status, answered.replayed, answered.body]).toEqual([200, false, { count: 1 }])
      const retry = yield* post("slow-1")
      expect([retry.status, retry.replayed, retry.body]).toEqual([200, true, { count: 1 }])
      expect(runs()).toBe(1)
    }))

  it.scoped("a claim no request of this process runs is not renewed: its lease runs out", () =>
    Effect.gen(function*() {
      const { store } = yield* serve(0)
      const scope = { keyId: "key_1", method: "POST", path: "/slow/things", key: "orphan" }
      const now = yield* TestClock.currentTimeMillis
      // A claim of another (dead) process: nothing here renews it.
      yield* store.claim(scope, {
        fingerprint: "f",
        claimId: "dead",
        now,
        leaseUntil: now + LEASE,
        expiresAt: now + 86_400_000
      })
      yield* TestClock.adjust(LEASE + RENEW_EVERY)
      const takeover = yield* store.claim(scope, {
        fingerprint: "f",
        claimId: "next",
        now: now + LEASE + RENEW_EVERY,
        leaseUntil: now + 2 * LEASE + RENEW_EVERY,
        expiresAt: now + 86_400_000
      })
      expect(takeover._tag).toBe("Claimed")
    }))
})
