/**
 * What a stored Idempotency-Key is matched on: the request fingerprint (keyed with the VAULT_KEY,
 * over the canonical body, so key order is ignored and null differs from absent; a rotation that
 * keeps the old key still matches), and its scope (API key and route: one route is one scope,
 * however its path is percent-encoded).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, TestClock } from "effect"
import { createHash } from "node:crypto"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { canonicalJson } from "../../src/idempotency/model/idempotency.ts"
import { apiKeyId } from "../../src/platform/http/security.ts"
import { DELEGATE_PATH, NOW as DELEGATE_NOW, validDelegateRequest } from "../support/delegate.ts"
import { address, API_KEY, buyer, get, post, type TestAppOptions } from "../support/http.ts"
import {
  createBody,
  expectIdempotencyError,
  isReplay,
  memoryIdempotencyStore,
  run,
  withKey
} from "./idempotency-api-fixtures.ts"

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
      for (
        const path of ["/checkout_sessions/", "//checkout_sessions", "/CHECKOUT_SESSIONS", "/checkout_sessions;v=1"]
      ) {
        const other = yield* post(path, createBody, withKey("spell-1"))
        expect(other.status).toBe(404)
        expect(isReplay(other)).toBe(false)
      }
      // The router would end a path at ';': a session's path with one is no route either, for
      // any method, and the session is left as it was.
      const id: string = first.body.id
      const update = yield* post(`/checkout_sessions/${id};x`, { items: [{ id: "mug-ceramic", quantity: 1 }] })
      expect(update.status).toBe(404)
      expect(update.body).toMatchObject({ code: "not_found", message: `No route POST /checkout_sessions/${id};x.` })
      expect((yield* get(`/checkout_sessions/${id};x=1`)).status).toBe(404)
      const read = yield* get(`/checkout_sessions/${id}`)
      expect(read.body.line_items.map((line: { item: { id: string } }) => line.item.id)).toEqual(["tshirt-classic"])
      // A ';' in the query is not the path's: the route answers (its own 404 for an unknown id).
      const queried = yield* get("/checkout_sessions/cs_none?note=a;b")
      expect(queried.body.code).toBe("not_found")
      expect(queried.body.message).not.toMatch(/^No route/)
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
