/**
 * Idempotent POSTs (CONTRACT §6) through the HTTP surface: replays of every checkout POST route,
 * conflicts, in-flight claims, concurrency (one process and two processes sharing a database),
 * expiry, failures that are not stored, key validation and the headers.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Either, Layer, Redacted, TestClock } from "effect"
import { createHash } from "node:crypto"
import { Api } from "../../src/app/api.ts"
import { CheckoutStore, type CheckoutStoreService } from "../../src/checkout/checkout-store.ts"
import { SqlCheckoutStore } from "../../src/checkout/sql-checkout-store.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { deriveVaultKeys } from "../../src/delegate/vault-crypto.ts"
import { delegateIdempotencyError } from "../../src/idempotency/idempotency-errors.ts"
import { IDEMPOTENCY_LEASE_MILLIS, idempotentRoutes } from "../../src/idempotency/idempotency-middleware.ts"
import { IdempotencyStore, type IdempotencyStoreService } from "../../src/idempotency/idempotency-store.ts"
import { IdempotencySweeper } from "../../src/idempotency/idempotency-sweeper-service.ts"
import { canonicalJson, requestFingerprint } from "../../src/idempotency/idempotency.ts"
import { SqlIdempotencyStore } from "../../src/idempotency/sql-idempotency-store.ts"
import { type Charge, type ChargeRequest, PaymentProvider } from "../../src/payments/payment-provider.ts"
import { testConfig } from "../../src/platform/config.ts"
import { apiKeyId } from "../../src/platform/http/security.ts"
import { make as makeMemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { make as makeMemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import {
  CARD_NUMBER,
  DELEGATE_PATH,
  delegateRequestWith,
  NOW as DELEGATE_NOW,
  validDelegateRequest
} from "../support/delegate.ts"
import {
  address,
  API_KEY,
  API_VERSION,
  buyer,
  get,
  paymentData,
  post,
  type RequestOptions,
  testApp,
  type TestAppOptions,
  type TestResponse
} from "../support/http.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "../support/test-database.ts"

/** The request fingerprint key of the test configuration's VAULT_KEY. */
const testFingerprintKey =
  Either.getOrThrow(deriveVaultKeys(Redacted.value(testConfig().vaultKey))).requestFingerprintKey

/** A memory checkout store on a memory database of its own. */
const memoryCheckoutStore = Effect.provide(makeMemoryCheckoutStore, freshMemoryDatabase)

/** A memory idempotency store on a memory database of its own. */
const memoryIdempotencyStore = Effect.provide(makeMemoryIdempotencyStore, freshMemoryDatabase)

// ---------------------------------------------------------------------------------------------
// Helpers

/** A payment provider that approves everything and records every `charge` call. */
const countingPayments = (options: { readonly dieOnFirstCharge?: boolean } = {}) => {
  const calls: Array<ChargeRequest> = []
  const layer = Layer.succeed(PaymentProvider, {
    threeDSecure: false,
    authorize: () => Effect.void,
    charge: (request) =>
      Effect.suspend(() => {
        calls.push(request)
        if (options.dieOnFirstCharge === true && calls.length === 1) return Effect.die(new Error("processor crashed"))
        return Effect.succeed<Charge>({ id: `ch_${calls.length}`, amount: request.amount, currency: request.currency })
      }),
    release: () => Effect.void
  })
  return { calls, layer }
}

/** Runs `effect` against a fresh application (with an approving, counting payment provider). */
const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, testApp({ payments: countingPayments().layer, ...options })) as Effect.Effect<A, E, never>

const withKey = (key: string, options: Omit<RequestOptions, "body"> = {}): Omit<RequestOptions, "body"> => ({
  ...options,
  headers: { ...options.headers, "idempotency-key": key }
})

const createBody = { items: [{ id: "tshirt-classic", quantity: 2 }], buyer, fulfillment_address: address }

const isReplay = (response: TestResponse) => response.headers.get("idempotent-replayed") === "true"

/** Units of `productId` held by live reservations in `store`. */
const reserved = (store: CheckoutStoreService, productId: string) =>
  Clock.currentTimeMillis.pipe(
    Effect.flatMap((now) => store.inventory.stockLevels(now)),
    Effect.map((levels) => levels.find((l) => l.productId === productId)?.reserved ?? 0)
  )

const expectIdempotencyError = (response: TestResponse, code: "idempotency_conflict" | "idempotency_in_flight") => {
  expect(response.status).toBe(409)
  expect(response.body).toEqual({ type: "request_not_idempotent", code, message: expect.any(String) })
  expect(isReplay(response)).toBe(false)
}

// ---------------------------------------------------------------------------------------------

describe("replays of each POST route", () => {
  it.effect("create: the same key and body return the stored 201 and make no second session", () =>
    Effect.gen(function*() {
      const store = yield* memoryCheckoutStore
      yield* run(
        Effect.gen(function*() {
          const first = yield* post("/checkout_sessions", createBody, withKey("create-1"))
          expect(first.status).toBe(201)
          expect(isReplay(first)).toBe(false)
          const second = yield* post("/checkout_sessions", createBody, withKey("create-1"))
          expect(second.status).toBe(201)
          expect(isReplay(second)).toBe(true)
          expect(second.text).toBe(first.text)
          expect(second.body.id).toBe(first.body.id)
          expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"))
          // Request-Id stays per request; the key is echoed on both.
          expect(second.headers.get("request-id")).not.toBe(first.headers.get("request-id"))
          expect(first.headers.get("idempotency-key")).toBe("create-1")
          expect(second.headers.get("idempotency-key")).toBe("create-1")
          // One reservation only.
          expect(yield* reserved(store, "tshirt-classic")).toBe(2)
        }),
        { store: Layer.succeed(CheckoutStore, store) }
      )
    }))

  it.effect("without a key every POST runs", () =>
    Effect.gen(function*() {
      const store = yield* memoryCheckoutStore
      yield* run(
        Effect.gen(function*() {
          const first = yield* post("/checkout_sessions", createBody)
          const second = yield* post("/checkout_sessions", createBody)
          expect(second.body.id).not.toBe(first.body.id)
          expect(first.headers.has("idempotency-key")).toBe(false)
          expect(isReplay(second)).toBe(false)
          expect(yield* reserved(store, "tshirt-classic")).toBe(4)
        }),
        { store: Layer.succeed(CheckoutStore, store) }
      )
    }))

  it.effect("update: a replay returns the stored result and does not apply the update again", () =>
    run(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", createBody)
      const path = `/checkout_sessions/${created.body.id}`
      const first = yield* post(path, { items: [{ id: "mug-ceramic", quantity: 1 }] }, withKey("update-a"))
      expect(first.status).toBe(200)
      const other = yield* post(path, { items: [{ id: "hoodie-zip", quantity: 1 }] }, withKey("update-b"))
      expect(other.status).toBe(200)
      const replay = yield* post(path, { items: [{ id: "mug-ceramic", quantity: 1 }] }, withKey("update-a"))
      expect(replay.status).toBe(200)
      expect(isReplay(replay)).toBe(true)
      expect(replay.text).toBe(first.text)
      const current = yield* get(path)
      expect(current.body.line_items.map((l: { item: { id: string } }) => l.item.id)).toEqual(["hoodie-zip"])
    })))

  it.effect("complete: a replay returns the same order and the card is charged once", () =>
    Effect.gen(function*() {
      const payments = countingPayments()
      yield* run(
        Effect.gen(function*() {
          const created = yield* post("/checkout_sessions", createBody)
          const path = `/checkout_sessions/${created.body.id}/complete`
          const first = yield* post(path, { payment_data: paymentData }, withKey("complete-1"))
          expect(first.status).toBe(200)
          expect(first.body.status).toBe("completed")
          const second = yield* post(path, { payment_data: paymentData }, withKey("complete-1"))
          expect(second.status).toBe(200)
          expect(isReplay(second)).toBe(true)
          expect(second.body.order.id).toBe(first.body.order.id)
          expect(payments.calls).toHaveLength(1)
          // Without the key, the same retry is a second complete: 409 session_completed.
          const unkeyed = yield* post(path, { payment_data: paymentData })
          expect(unkeyed.status).toBe(409)
          expect(payments.calls).toHaveLength(1)
        }),
        { payments: payments.layer }
      )
    }))

  it.effect("cancel: a replay returns the stored 200, not 405", () =>
    run(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", createBody)
      const path = `/checkout_sessions/${created.body.id}/cancel`
      const first = yield* post(path, undefined, withKey("cancel-1"))
      expect(first.status).toBe(200)
      expect(first.body.status).toBe("canceled")
      const second = yield* post(path, undefined, withKey("cancel-1"))
      expect(second.status).toBe(200)
      expect(isReplay(second)).toBe(true)
      expect(second.text).toBe(first.text)
      const unkeyed = yield* post(path)
      expect(unkeyed.status).toBe(405)
    })))

  it.effect("4xx results are stored and replayed too", () =>
    run(Effect.gen(function*() {
      const body = { items: [{ id: "no-such-product", quantity: 1 }] }
      const first = yield* post("/checkout_sessions", body, withKey("bad-1"))
      expect(first.status).toBe(400)
      const second = yield* post("/checkout_sessions", body, withKey("bad-1"))
      expect(second.status).toBe(400)
      expect(isReplay(second)).toBe(true)
      expect(second.body).toEqual(first.body)
      expect(second.headers.get("idempotency-key")).toBe("bad-1")
    })))
})

describe("the delegate payment route", () => {
  it.effect("a retried tokenization returns the same token; another body is the delegate 409", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(DELEGATE_NOW)
      const first = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("tok-1"))
      expect(first.status).toBe(201)
      const second = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("tok-1"))
      expect(second.status).toBe(201)
      expect(isReplay(second)).toBe(true)
      expect(second.body.id).toBe(first.body.id)
      expect(second.text).not.toContain(CARD_NUMBER)
      const unkeyed = yield* post(DELEGATE_PATH, validDelegateRequest())
      expect(unkeyed.body.id).not.toBe(first.body.id)

      const conflict = yield* post(
        DELEGATE_PATH,
        delegateRequestWith((request) => {
          request.allowance.max_amount = 1000
        }),
        withKey("tok-1")
      )
      expect(conflict.status).toBe(409)
      expect(conflict.body).toEqual({
        type: "invalid_request",
        code: "idempotency_conflict",
        message: expect.any(String)
      })
      const badKey = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("has space"))
      expect(badKey.status).toBe(400)
      expect(badKey.body).toMatchObject({
        type: "invalid_request",
        code: "invalid_card",
        param: "$.headers['Idempotency-Key']"
      })
    })))
})

describe("keyed fingerprints", () => {
  it.effect("what is stored is keyed, not a hash of the body; replays survive a VAULT_KEY rotation that keeps the old key", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DELEGATE_NOW)
      const idempotency = yield* memoryIdempotencyStore
      const idempotencyStore = Layer.succeed(IdempotencyStore, idempotency)
      const oldKey = Redacted.make(Buffer.alloc(32, 3).toString("base64"))
      const newKey = Redacted.make(Buffer.alloc(32, 4).toString("base64"))
      const body = validDelegateRequest()
      const tokenize = (config: NonNullable<TestAppOptions["config"]>) =>
        run(post(DELEGATE_PATH, body, withKey("rot-1")), { idempotencyStore, config })

      const first = yield* tokenize({ vaultKey: oldKey })
      expect(first.status).toBe(201)
      // Read the stored record back: a claim with another fingerprint answers it.
      const scope = { keyId: apiKeyId(API_KEY), method: "POST", path: DELEGATE_PATH, key: "rot-1" }
      const probe = yield* idempotency.claim(scope, {
        fingerprint: "probe",
        claimId: "probe",
        now: DELEGATE_NOW,
        leaseUntil: DELEGATE_NOW + 1,
        expiresAt: DELEGATE_NOW + 2
      })
      if (probe._tag !== "Existing") return expect.fail("the tokenization was not stored")
      const unkeyed = createHash("sha256").update(`json\0${canonicalJson(body)}`, "utf8").digest("hex")
      // Keyed, over the body and the API-Version (the delegate route's format follows it).
      expect(probe.record.fingerprint).toMatch(/^hmac2:[0-9a-f]{64}$/)
      expect(probe.record.fingerprint).not.toContain(unkeyed)

      const rotated = yield* tokenize({ vaultKey: newKey, retiredVaultKeys: [oldKey] })
      expect(rotated.status).toBe(201)
      expect(isReplay(rotated)).toBe(true)
      expect(rotated.body.id).toBe(first.body.id)
      // Once the old key is dropped, the record can no longer be matched: 409, never a second token.
      const forgotten = yield* tokenize({ vaultKey: newKey })
      expect(forgotten.status).toBe(409)
      expect(forgotten.body.code).toBe("idempotency_conflict")
    }))
})

describe("fingerprints and scope", () => {
  it.effect("the same key with another body is 409 idempotency_conflict; key order is ignored", () =>
    run(Effect.gen(function*() {
      const first = yield* post("/checkout_sessions", createBody, withKey("fp-1"))
      expect(first.status).toBe(201)
      // Same value, keys in another order at every depth, sent as raw JSON text.
      const reordered = JSON.stringify({
        fulfillment_address: Object.fromEntries(Object.entries(address).reverse()),
        buyer: Object.fromEntries(Object.entries(buyer).reverse()),
        items: [{ quantity: 2, id: "tshirt-classic" }]
      })
      const replay = yield* post("/checkout_sessions", reordered, withKey("fp-1"))
      expect(replay.status).toBe(201)
      expect(isReplay(replay)).toBe(true)
      expect(replay.body.id).toBe(first.body.id)

      const conflict = yield* post(
        "/checkout_sessions",
        { ...createBody, items: [{ id: "tshirt-classic", quantity: 3 }] },
        withKey("fp-1")
      )
      expectIdempotencyError(conflict, "idempotency_conflict")
      expect(conflict.headers.get("idempotency-key")).toBe("fp-1")
    })))

  it.effect("null differs from absent", () =>
    run(Effect.gen(function*() {
      const body = { items: [{ id: "mug-ceramic", quantity: 1 }] }
      const first = yield* post("/checkout_sessions", body, withKey("null-1"))
      expect(first.status).toBe(201)
      const withNull = yield* post("/checkout_sessions", { ...body, buyer: null }, withKey("null-1"))
      expectIdempotencyError(withNull, "idempotency_conflict")
    })))

  it.effect("keys are scoped by API key and path", () =>
    run(
      Effect.gen(function*() {
        const first = yield* post("/checkout_sessions", createBody, withKey("scope-1"))
        const otherApiKey = yield* post("/checkout_sessions", createBody, withKey("scope-1", { auth: "sk_test_other" }))
        expect(otherApiKey.status).toBe(201)
        expect(isReplay(otherApiKey)).toBe(false)
        expect(otherApiKey.body.id).not.toBe(first.body.id)
        const otherPath = yield* post(`/checkout_sessions/${first.body.id}/cancel`, createBody, withKey("scope-1"))
        expect(otherPath.status).toBe(200)
        expect(isReplay(otherPath)).toBe(false)
      }),
      { config: { apiKeys: [Redacted.make(API_KEY), Redacted.make("sk_test_other")] } }
    ))
})

describe("one route, one scope", () => {
  it.effect("the route answers only its exact spelling; percent-encoding is one scope with the plain path", () =>
    run(Effect.gen(function*() {
      const first = yield* post("/checkout_sessions", createBody, withKey("spell-1"))
      expect(first.status).toBe(201)
      // Other spellings are not the route: 404, nothing created, nothing stored under the key.
      for (const path of ["/checkout_sessions/", "//checkout_sessions", "/CHECKOUT_SESSIONS"]) {
        const other = yield* post(path, createBody, withKey("spell-1"))
        expect(other.status).toBe(404)
        expect(isReplay(other)).toBe(false)
      }
      // The router decodes %5F to "_": the same route, so the same scope (a replay, not a second session).
      const encoded = yield* post("/checkout%5Fsessions", createBody, withKey("spell-1"))
      expect(encoded.status).toBe(201)
      expect(isReplay(encoded)).toBe(true)
      expect(encoded.body.id).toBe(first.body.id)
      const conflict = yield* post(
        "/checkout%5fsessions",
        { items: [{ id: "mug-ceramic", quantity: 1 }] },
        withKey("spell-1")
      )
      expectIdempotencyError(conflict, "idempotency_conflict")
    })))

  it.effect("a tokenization under an encoded path is the same token, not a second one", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(DELEGATE_NOW)
      const first = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("spell-vt"))
      expect(first.status).toBe(201)
      const encoded = yield* post("/agentic_commerce/delegate%5Fpayment", validDelegateRequest(), withKey("spell-vt"))
      expect(encoded.status).toBe(201)
      expect(isReplay(encoded)).toBe(true)
      expect(encoded.body.id).toBe(first.body.id)
      const trailing = yield* post(`${DELEGATE_PATH}/`, validDelegateRequest(), withKey("spell-vt"))
      expect(trailing.status).toBe(404)
    })))
})

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
})

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

describe("the Idempotency-Key header", () => {
  it.effect("must be 1-255 printable ASCII characters", () =>
    run(Effect.gen(function*() {
      for (const bad of ["x".repeat(256), "has space", ""]) {
        const response = yield* post("/checkout_sessions", createBody, withKey(bad))
        expect(response.status).toBe(400)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "invalid",
          message: expect.any(String),
          param: "$.headers['Idempotency-Key']"
        })
        expect(response.headers.has("idempotency-key")).toBe(false)
      }
      const longest = yield* post("/checkout_sessions", createBody, withKey("k".repeat(255)))
      expect(longest.status).toBe(201)
      expect(longest.headers.get("idempotency-key")).toBe("k".repeat(255))
    })))

  it.effect("unauthenticated requests get 401 (with the key echoed) and are never stored", () =>
    run(Effect.gen(function*() {
      const bad = yield* post("/checkout_sessions", createBody, withKey("x".repeat(300), { auth: "sk_wrong" }))
      expect(bad.status).toBe(401)
      const first = yield* post("/checkout_sessions", createBody, withKey("auth-1", { auth: "sk_wrong" }))
      expect(first.status).toBe(401)
      expect(first.headers.get("idempotency-key")).toBe("auth-1")
      const second = yield* post("/checkout_sessions", createBody, withKey("auth-1", { auth: false }))
      expect(second.status).toBe(401)
      expect(isReplay(second)).toBe(false)
      const authenticated = yield* post("/checkout_sessions", createBody, withKey("auth-1"))
      expect(authenticated.status).toBe(201)
      expect(isReplay(authenticated)).toBe(false)
    })))

  it.effect("is echoed on errors the route answers, and on GETs", () =>
    run(Effect.gen(function*() {
      const missing = yield* post("/checkout_sessions/cs_missing", { buyer }, withKey("echo-1"))
      expect(missing.status).toBe(404)
      expect(missing.headers.get("idempotency-key")).toBe("echo-1")
      const read = yield* get("/checkout_sessions/cs_missing", withKey("echo-2"))
      expect(read.headers.get("idempotency-key")).toBe("echo-2")
    })))

  it.effect("the webhook receiver is not covered: nothing is replayed there", () =>
    run(Effect.gen(function*() {
      const path = "/agentic_checkout/webhooks/order_events"
      const first = yield* post(path, { type: "order_create" }, withKey("hook-1"))
      const second = yield* post(path, { type: "order_create" }, withKey("hook-1"))
      expect(isReplay(first)).toBe(false)
      expect(isReplay(second)).toBe(false)
      const routeOf = idempotentRoutes(Api)
      expect(routeOf(path)).toBeUndefined()
      expect(routeOf("/agentic_commerce/delegate_payment")).toBeDefined()
      expect(routeOf("/orders/ord_1/refunds")).toBeDefined()
    })))

  it("the delegate route family gets its own error object", () => {
    const routeOf = idempotentRoutes(Api)
    expect(routeOf("/agentic_commerce/delegate_payment")?.family).toBe("delegate")
    expect(routeOf("/checkout_sessions")?.family).toBe("checkout")
    expect(delegateIdempotencyError("2025-09-29", "conflict")).toMatchObject({
      type: "invalid_request",
      code: "idempotency_conflict"
    })
    expect(delegateIdempotencyError("2025-09-29", "in_flight")).toMatchObject({
      type: "invalid_request",
      code: "idempotency_in_flight"
    })
    expect(delegateIdempotencyError("2025-09-29", "invalid_key")).toMatchObject({
      type: "invalid_request",
      code: "invalid_card",
      param: "$.headers['Idempotency-Key']"
    })
  })
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
