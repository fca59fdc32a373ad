/**
 * Which answers an Idempotency-Key keeps, and for how long: a 400 for the request's headers
 * (API-Version, Content-Type, Content-Encoding) is not kept, nor is a 500 or a 503, so the retry runs again; an
 * unreachable idempotency store refuses the request; after IDEMPOTENCY_TTL_SECONDS the key runs
 * again, and the sweeper deletes expired keys.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { CheckoutStore, type CheckoutStoreService } from "../../src/checkout/checkout-store.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { IdempotencyStore, type IdempotencyStoreService } from "../../src/idempotency/idempotency-store.ts"
import { IdempotencySweeper } from "../../src/idempotency/sweeper.ts"
import { paymentData, post } from "../support/http.ts"
import {
  countingPayments,
  createBody,
  isReplay,
  memoryCheckoutStore,
  memoryIdempotencyStore,
  reserved,
  run,
  withKey
} from "./idempotency-api-fixtures.ts"

describe("requests the route refuses for their headers", () => {
  it.effect("a stored answer is not replayed without a valid API-Version, and such a 400 is not kept", () =>
    run(Effect.gen(function*() {
      const refused = yield* post("/checkout_sessions", createBody, withKey("hdr-1", { version: false }))
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe("missing_api_version")
      // The corrected retry runs: the 400 was not stored under the key.
      const first = yield* post("/checkout_sessions", createBody, withKey("hdr-1"))
      expect(first.status).toBe(201)
      expect(isReplay(first)).toBe(false)
      for (const version of [false, "1999-01-01"] as const) {
        const again = yield* post("/checkout_sessions", createBody, withKey("hdr-1", { version }))
        expect(again.status).toBe(400)
        expect(again.body.code).toBe(version === false ? "missing_api_version" : "unsupported_api_version")
        expect(isReplay(again)).toBe(false)
      }
      const replay = yield* post("/checkout_sessions", createBody, withKey("hdr-1"))
      expect(isReplay(replay)).toBe(true)
      expect(replay.body.id).toBe(first.body.id)
    })))

  it.effect("a 400 for a body not sent as JSON is not kept: the retry with the right Content-Type runs", () =>
    run(Effect.gen(function*() {
      const refused = yield* post("/checkout_sessions", createBody, withKey("ct-1", { contentType: "text/plain" }))
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe("invalid_content_type")
      const retried = yield* post("/checkout_sessions", createBody, withKey("ct-1"))
      expect(retried.status).toBe(201)
      expect(isReplay(retried)).toBe(false)
      // A 400 to a JSON request is the answer to its body: kept and replayed.
      const invalid = yield* post("/checkout_sessions", { items: [] }, withKey("ct-2"))
      expect(invalid.status).toBe(400)
      const again = yield* post("/checkout_sessions", { items: [] }, withKey("ct-2"))
      expect(isReplay(again)).toBe(true)
    })))

  it.effect("nor is a 400 for a body in another charset or with a content coding", () =>
    run(Effect.gen(function*() {
      const options = [
        { contentType: "application/json; charset=utf-16" },
        { headers: { "content-encoding": "gzip" } }
      ]
      for (const [index, refusedWith] of options.entries()) {
        const key = `coding-${index}`
        const refused = yield* post("/checkout_sessions", createBody, withKey(key, refusedWith))
        expect(refused.status).toBe(400)
        expect(refused.body.code).toBe("invalid_content_type")
        const retried = yield* post("/checkout_sessions", createBody, withKey(key))
        expect(retried.status).toBe(201)
        expect(isReplay(retried)).toBe(false)
      }
    })))
})

describe("expiry", () => {
  it.effect("after IDEMPOTENCY_TTL_SECONDS the same key runs again", () =>
    run(
      Effect.gen(function*() {
        const first = yield* post("/checkout_sessions", createBody, withKey("ttl-1"))
        yield* TestClock.adjust("59 seconds")
        const replay = yield* post("/checkout_sessions", createBody, withKey("ttl-1"))
        expect(isReplay(replay)).toBe(true)
        yield* TestClock.adjust("1 second")
        const again = yield* post("/checkout_sessions", createBody, withKey("ttl-1"))
        expect(again.status).toBe(201)
        expect(isReplay(again)).toBe(false)
        expect(again.body.id).not.toBe(first.body.id)
        // An expired key is absent: even another body may use it now... after its own TTL.
        yield* TestClock.adjust("60 seconds")
        const otherBody = yield* post(
          "/checkout_sessions",
          { items: [{ id: "mug-ceramic", quantity: 1 }] },
          withKey("ttl-1")
        )
        expect(otherBody.status).toBe(201)
        expect(isReplay(otherBody)).toBe(false)
      }),
      { config: { idempotencyTtlSeconds: 60 } }
    ))

  it.effect("the sweeper deletes expired keys in the background", () =>
    Effect.gen(function*() {
      const idempotency = yield* memoryIdempotencyStore
      const scope = { keyId: "key_x", method: "POST", path: "/checkout_sessions", key: "sweep-1" }
      yield* idempotency.claim(scope, { fingerprint: "f", claimId: "c", now: 0, leaseUntil: 1000, expiresAt: 1000 })
      yield* idempotency.complete(scope, "c", { status: 201, headers: {}, body: new Uint8Array() }, 1000)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(IdempotencySweeper.pipe(Layer.provide(Layer.succeed(IdempotencyStore, idempotency))))
        yield* TestClock.adjust("1 minute")
        // Gone for good, not merely expired: a claim at time 0 would otherwise see it.
        const outcome = yield* idempotency.claim(scope, {
          fingerprint: "g",
          claimId: "d",
          now: 0,
          leaseUntil: 1,
          expiresAt: 2
        })
        expect(outcome._tag).toBe("Claimed")
      }))
    }))
})

describe("failures are not stored", () => {
  it.effect("a 500 releases the key: the retry runs again and succeeds", () =>
    Effect.gen(function*() {
      const payments = countingPayments({ dieOnFirstCharge: true })
      yield* run(
        Effect.gen(function*() {
          const created = yield* post("/checkout_sessions", createBody)
          const path = `/checkout_sessions/${created.body.id}/complete`
          const first = yield* post(path, { payment_data: paymentData }, withKey("fail-1"))
          expect(first.status).toBe(500)
          expect(first.headers.get("idempotency-key")).toBe("fail-1")
          const retry = yield* post(path, { payment_data: paymentData }, withKey("fail-1"))
          expect(retry.status).toBe(200)
          expect(isReplay(retry)).toBe(false)
          expect(payments.calls).toHaveLength(2)
          // Both calls carry the same provider key, so a real processor charges once.
          expect(payments.calls[1]!.idempotencyKey).toBe(payments.calls[0]!.idempotencyKey)
        }),
        { payments: payments.layer }
      )
    }))

  it.effect("a 503 (storage unreachable) releases the key", () =>
    Effect.gen(function*() {
      const base = yield* memoryCheckoutStore
      let failures = 1
      const flaky: CheckoutStoreService = {
        ...base,
        createSessionReservingStock: (...args) =>
          failures-- > 0
            ? Effect.fail(new StorageError({ reason: "unavailable", cause: new Error("connection refused") }))
            : base.createSessionReservingStock(...args)
      }
      yield* run(
        Effect.gen(function*() {
          const first = yield* post("/checkout_sessions", createBody, withKey("down-1"))
          expect(first.status).toBe(503)
          const retry = yield* post("/checkout_sessions", createBody, withKey("down-1"))
          expect(retry.status).toBe(201)
          expect(isReplay(retry)).toBe(false)
        }),
        { store: Layer.succeed(CheckoutStore, flaky) }
      )
    }))

  it.effect("when the idempotency store is unreachable the request is refused with 503, not run unguarded", () =>
    Effect.gen(function*() {
      const store = yield* memoryCheckoutStore
      const base = yield* memoryIdempotencyStore
      const down: IdempotencyStoreService = {
        ...base,
        claim: () => Effect.fail(new StorageError({ reason: "unavailable", cause: new Error("connection refused") }))
      }
      yield* run(
        Effect.gen(function*() {
          const response = yield* post("/checkout_sessions", createBody, withKey("down-2"))
          expect(response.status).toBe(503)
          expect(response.body.code).toBe("service_unavailable")
          expect(response.headers.has("retry-after")).toBe(true)
          expect(yield* reserved(store, "tshirt-classic")).toBe(0)
        }),
        { store: Layer.succeed(CheckoutStore, store), idempotencyStore: Layer.succeed(IdempotencyStore, down) }
      )
    }))
})
