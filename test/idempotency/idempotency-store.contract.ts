/**
 * The behaviour every `IdempotencyStore` must have. `idempotencyStoreContract(name, layer)`
 * registers the cases for one implementation. Each case uses its own keys, so the cases share one
 * store; times are explicit epoch milliseconds (the store never reads a clock).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import {
  type ClaimOutcome,
  type IdempotencyScope,
  IdempotencyStore,
  type StoredResponse
} from "../../src/idempotency/idempotency-store.ts"

const T0 = Date.parse("2026-03-01T12:00:00.000Z")
const LEASE = 60_000
const TTL = 86_400_000

const scopeOf = (overrides: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
  keyId: "key_abc",
  method: "POST",
  path: "/checkout_sessions",
  key: `idem_${randomUUID()}`,
  ...overrides
})

const claimAt = (scope: IdempotencyScope, now: number, fingerprint = "fp_a", claimId = randomUUID()) =>
  Effect.flatMap(IdempotencyStore, (store) =>
    Effect.map(
      store.claim(scope, { fingerprint, claimId, now, leaseUntil: now + LEASE, expiresAt: now + TTL }),
      (outcome) => ({ outcome, claimId })
    ))

const response: StoredResponse = {
  status: 201,
  headers: { "content-type": "application/json", location: "/checkout_sessions/cs_1" },
  // Not valid UTF-8 on purpose: the body is kept byte for byte.
  body: new Uint8Array([123, 34, 105, 100, 34, 58, 34, 99, 115, 95, 49, 34, 125, 0, 255])
}

const tag = (outcome: ClaimOutcome) => outcome._tag

export const idempotencyStoreContract = (
  name: string,
  storeLayer: Layer.Layer<IdempotencyStore, unknown>,
  options: { readonly multiConnection: boolean }
) =>
  layer(Layer.orDie(storeLayer), { timeout: 60_000 })(name, (it) => {
    it.effect("the first claim wins; the record is in flight with its fingerprint and lease", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = scopeOf()
        const first = yield* claimAt(scope, T0)
        expect(tag(first.outcome)).toBe("Claimed")
        const second = yield* claimAt(scope, T0 + 1)
        expect(second.outcome).toMatchObject({
          _tag: "Existing",
          record: {
            state: "in_flight",
            fingerprint: "fp_a",
            leaseUntil: T0 + LEASE,
            createdAt: T0,
            expiresAt: T0 + TTL
          }
        })
        const found = yield* store.find(scope, T0 + 2)
        expect(Option.getOrThrow(found).state).toBe("in_flight")
      }))

    it.effect("the scope is (key id, method, path, key): any part different is another key", () =>
      Effect.gen(function*() {
        const scope = scopeOf()
        expect(tag((yield* claimAt(scope, T0)).outcome)).toBe("Claimed")
        expect(tag((yield* claimAt({ ...scope, keyId: "key_other" }, T0)).outcome)).toBe("Claimed")
        expect(tag((yield* claimAt({ ...scope, path: "/checkout_sessions/cs_1" }, T0)).outcome)).toBe("Claimed")
        expect(tag((yield* claimAt({ ...scope, method: "PUT" }, T0)).outcome)).toBe("Claimed")
        expect(tag((yield* claimAt({ ...scope, key: `${scope.key}x` }, T0)).outcome)).toBe("Claimed")
        expect(tag((yield* claimAt(scope, T0)).outcome)).toBe("Existing")
      }))

    it.effect("complete stores status, headers and body byte for byte; later claims see it", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = scopeOf()
        const { claimId } = yield* claimAt(scope, T0)
        expect(yield* store.complete(scope, claimId, response, T0 + 5 + TTL)).toBe(true)
        const again = yield* claimAt(scope, T0 + 10, "fp_a")
        expect(again.outcome._tag).toBe("Existing")
        if (again.outcome._tag !== "Existing") return
        const record = again.outcome.record
        expect(record.state).toBe("completed")
        if (record.state !== "completed") return
        expect(record.response.status).toBe(201)
        expect(record.response.headers).toEqual(response.headers)
        expect([...record.response.body]).toEqual([...response.body])
        expect(record.expiresAt).toBe(T0 + 5 + TTL)
        // A completed record is never taken over, whatever the lease said.
        const late = yield* claimAt(scope, T0 + LEASE * 10, "fp_a")
        expect(late.outcome._tag).toBe("Existing")
      }))

    it.effect("release deletes the claim, so the next request claims again", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = scopeOf()
        const { claimId } = yield* claimAt(scope, T0)
        expect(yield* store.release(scope, claimId)).toBe(true)
        expect(Option.isNone(yield* store.find(scope, T0))).toBe(true)
        expect(tag((yield* claimAt(scope, T0 + 1, "fp_other")).outcome)).toBe("Claimed")
      }))

    it.effect("a claim whose lease ran out is taken over by the same body, never by another", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = scopeOf()
        const first = yield* claimAt(scope, T0)
        expect(tag((yield* claimAt(scope, T0 + LEASE - 1)).outcome)).toBe("Existing")
        const other = yield* claimAt(scope, T0 + LEASE, "fp_other")
        expect(other.outcome).toMatchObject({ _tag: "Existing", record: { fingerprint: "fp_a" } })
        const takeover = yield* claimAt(scope, T0 + LEASE, "fp_a")
        expect(tag(takeover.outcome)).toBe("Claimed")
        // The presumed-dead first owner can no longer write, release or renew.
        expect(yield* store.complete(scope, first.claimId, response, T0 + TTL)).toBe(false)
        expect(yield* store.release(scope, first.claimId)).toBe(false)
        expect(yield* store.renewLease(scope, first.claimId, T0 + LEASE * 3)).toBe(false)
        // The new owner can.
        expect(yield* store.complete(scope, takeover.claimId, response, T0 + LEASE + TTL)).toBe(true)
        expect(yield* store.release(scope, takeover.claimId)).toBe(false) // completed: not releasable
      }))

    it.effect("renewing the lease keeps a live claim from being taken over", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = scopeOf()
        const { claimId } = yield* claimAt(scope, T0)
        expect(yield* store.renewLease(scope, claimId, T0 + 2 * LEASE)).toBe(true)
        expect(tag((yield* claimAt(scope, T0 + LEASE + 1)).outcome)).toBe("Existing")
        expect(tag((yield* claimAt(scope, T0 + 2 * LEASE)).outcome)).toBe("Claimed")
      }))

    it.effect("an expired record is absent: find sees nothing and any body claims the key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const scope = scopeOf()
        const { claimId } = yield* claimAt(scope, T0)
        yield* store.complete(scope, claimId, response, T0 + 1000)
        expect(Option.isSome(yield* store.find(scope, T0 + 999))).toBe(true)
        expect(Option.isNone(yield* store.find(scope, T0 + 1000))).toBe(true)
        expect(tag((yield* claimAt(scope, T0 + 1000, "fp_other")).outcome)).toBe("Claimed")
        const found = Option.getOrThrow(yield* store.find(scope, T0 + 1001))
        expect(found).toMatchObject({ state: "in_flight", fingerprint: "fp_other", createdAt: T0 + 1000 })
      }))

    it.effect("deleteExpired removes expired records in batches, never a live claim", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        // Far in the future, so other cases' records (all near T0) are expired too: drain them first.
        const far = T0 + 1000 * TTL
        while ((yield* store.deleteExpired(far, 1000)) > 0) {
          // keep draining
        }
        const expired = Array.from({ length: 5 }, () => scopeOf())
        for (const scope of expired) {
          const { claimId } = yield* claimAt(scope, far)
          yield* store.complete(scope, claimId, response, far + 10)
        }
        const live = scopeOf()
        yield* claimAt(live, far + 5)
        expect(yield* store.deleteExpired(far + 10, 2)).toBe(2)
        expect(yield* store.deleteExpired(far + 10, 10)).toBe(3)
        expect(yield* store.deleteExpired(far + 10, 10)).toBe(0)
        expect(Option.isSome(yield* store.find(live, far + 10))).toBe(true)
        for (const scope of expired) expect(Option.isNone(yield* store.find(scope, far))).toBe(true)
      }))

    it.effect(
      `concurrent claims of one key: exactly one wins${options.multiConnection ? " (several connections)" : ""}`,
      () =>
        Effect.gen(function*() {
          const scope = scopeOf()
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 25 }, (_, i) => i),
            () => claimAt(scope, T0),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o.outcome._tag === "Claimed")).toHaveLength(1)
          expect(outcomes.filter((o) => o.outcome._tag === "Existing")).toHaveLength(24)
        })
    )

    it.effect("concurrent take-overs of a dead claim: exactly one wins", () =>
      Effect.gen(function*() {
        const scope = scopeOf()
        yield* claimAt(scope, T0)
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          () => claimAt(scope, T0 + LEASE),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o.outcome._tag === "Claimed")).toHaveLength(1)
      }))
  })
