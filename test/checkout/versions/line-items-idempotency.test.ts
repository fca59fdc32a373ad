/**
 * Idempotency-Key rules of the checkout API per version: 2026-04-17 requires the key on every POST
 * (400 `idempotency_key_required`) and answers a reused key with another body 422
 * `idempotency_conflict`; 2026-01-30 keeps the earlier rules (key optional, conflict 409). A stored
 * answer is only ever replayed to the version it was made for.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  clientOf,
  completeRequest,
  createRequest,
  idempotencyKey,
  runApp,
  updateRequest
} from "../../support/acp-fixtures.ts"
import { post } from "../../support/http.ts"

const V0417 = { version: "2026-04-17" }

describe("2026-01-30: the key is optional, a reused key with another body is 409", () => {
  const client = clientOf("2026-01-30")

  it.effect("no key: the request runs", () =>
    runApp(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", createRequest("2026-01-30"), { version: "2026-01-30" })
      expect(created.status).toBe(201)
      const canceled = yield* post(`/checkout_sessions/${created.body.id}/cancel`, undefined, {
        version: "2026-01-30"
      })
      expect(canceled.status).toBe(200)
    })))

  it.effect("the same key with another body: 409 idempotency_conflict, nothing created", () =>
    runApp(Effect.gen(function*() {
      const key = { headers: { "idempotency-key": idempotencyKey() } }
      expect((yield* client.create(createRequest("2026-01-30"), key)).status).toBe(201)
      const other = yield* client.create(createRequest("2026-01-30", { line_items: [{ id: "hoodie-zip" }] }), key)
      expect([other.status, other.body.code]).toEqual([409, "idempotency_conflict"])
    })))
})

describe("2026-04-17: the key is required; a reused key with another body is 422", () => {
  const client = clientOf("2026-04-17")

  it.effect("no key on create, update, complete or cancel: 400 idempotency_key_required, nothing done", () =>
    runApp(Effect.gen(function*() {
      const expected = { status: 400, type: "invalid_request", code: "idempotency_key_required" }
      const refusal = (response: { status: number; body: any }) => ({
        status: response.status,
        type: response.body?.type,
        code: response.body?.code
      })
      expect(refusal(yield* post("/checkout_sessions", createRequest("2026-04-17"), V0417))).toEqual(expected)
      const session = yield* client.created(createRequest("2026-04-17"))
      const path = `/checkout_sessions/${session.id}`
      expect(refusal(yield* post(path, updateRequest("2026-04-17"), V0417))).toEqual(expected)
      const token = yield* client.delegate(session.id, 100_000)
      expect(refusal(yield* post(`${path}/complete`, completeRequest("2026-04-17", token), V0417))).toEqual(expected)
      expect(refusal(yield* post(`${path}/cancel`, undefined, V0417))).toEqual(expected)
      // None of them changed the session.
      expect((yield* client.get(session.id)).body).toEqual(session)
    })))

  it.effect("the same key with another body: 422 idempotency_conflict, the first answer stays", () =>
    runApp(Effect.gen(function*() {
      const key = { headers: { "idempotency-key": idempotencyKey() } }
      const first = yield* client.create(createRequest("2026-04-17"), key)
      expect(first.status).toBe(201)
      const other = yield* client.create(createRequest("2026-04-17", { line_items: [{ id: "hoodie-zip" }] }), key)
      expect({ status: other.status, type: other.body.type, code: other.body.code }).toEqual({
        status: 422,
        type: "invalid_request",
        code: "idempotency_conflict"
      })
      const again = yield* client.create(createRequest("2026-04-17"), key)
      expect([again.status, again.text]).toEqual([201, first.text])
    })))
})

/** The fingerprint includes the version: a stored answer is never replayed in another version's format. */
describe("a stored answer is replayed only to its version", () => {
  it.effect("the same key and body under another version is not answered in the first version's format", () =>
    runApp(Effect.gen(function*() {
      const key = { headers: { "idempotency-key": idempotencyKey() } }
      // A body both formats read alike.
      const body = createRequest("2026-01-30")
      const first = yield* clientOf("2026-01-30").create(body, key)
      expect(first.body.protocol).toEqual({ version: "2026-01-30" })
      // Either a session in the 2026-04-17 format or a refusal of the reused key; never the stored
      // 2026-01-30 answer (which `request` also finds off the 2026-04-17 schema).
      const other = yield* clientOf("2026-04-17").create(body, key)
      if (other.status === 201) expect(other.body.protocol).toEqual({ version: "2026-04-17" })
      else expect([409, 422]).toContain(other.status)
    })))
})
