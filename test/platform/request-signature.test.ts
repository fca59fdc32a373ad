/**
 * Optional request signing (CONTRACT §3): with REQUEST_SIGNING_SECRETS, checkout requests need a
 * fresh Timestamp and a Signature over the raw body; without, both headers are ignored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, TestClock } from "effect"
import { signRequest } from "../../src/shared/request-signing.ts"
import { address, buyer, get, paymentData, post, request, type RequestOptions, testApp } from "../support/http.ts"

const SECRET = "sig_secret_current"
const OLD_SECRET = "sig_secret_previous"
const NOW = Date.parse("2026-02-01T12:00:00Z")
const nowSeconds = Math.floor(NOW / 1000)

const signingApp = testApp({ config: { requestSigningSecrets: [Redacted.make(SECRET), Redacted.make(OLD_SECRET)] } })

const run = <A, E>(effect: Effect.Effect<A, E, any>, app = signingApp) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), app) as Effect.Effect<A, E, never>

const signedHeaders = (rawBody: string, options: { secret?: string; timestamp?: string } = {}) => {
  const timestamp = options.timestamp ?? String(nowSeconds)
  return { timestamp, signature: signRequest(options.secret ?? SECRET, timestamp, rawBody) }
}

/** A request whose body is sent exactly as `rawBody`, signed unless told otherwise. */
const signed = (
  method: string,
  path: string,
  rawBody: string,
  headers: Record<string, string>,
  options: RequestOptions = {}
) =>
  request(method, path, {
    ...options,
    headers: { ...headers, ...options.headers },
    ...(rawBody === "" ? {} : { body: rawBody })
  })

const createBody = JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 1 }], buyer, fulfillment_address: address })

describe("request signatures required (REQUEST_SIGNING_SECRETS set)", () => {
  it.effect("a valid signature passes, with Unix-seconds or RFC 3339 timestamps and any configured secret", () =>
    run(Effect.gen(function*() {
      const created = yield* signed("POST", "/checkout_sessions", createBody, signedHeaders(createBody))
      expect(created.status).toBe(201)
      const id = created.body.id as string
      // RFC 3339, the previous secret (rotation), and a GET signs the empty body.
      const rfc = signedHeaders("", { timestamp: "2026-02-01T11:58:00Z", secret: OLD_SECRET })
      const read = yield* signed("GET", `/checkout_sessions/${id}`, "", rfc)
      expect(read.status).toBe(200)
      expect(read.body.id).toBe(id)
      // The handler still reads the body after the middleware did: the update is applied.
      const updateBody = JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 3 }] })
      const updated = yield* signed("POST", `/checkout_sessions/${id}`, updateBody, signedHeaders(updateBody))
      expect(updated.status).toBe(200)
      expect(updated.body.line_items[0].item.quantity).toBe(3)
      const completeBody = JSON.stringify({ payment_data: paymentData })
      const completed = yield* signed(
        "POST",
        `/checkout_sessions/${id}/complete`,
        completeBody,
        signedHeaders(completeBody)
      )
      expect(completed.status).toBe(200)
      expect(completed.body.status).toBe("completed")
    })))

  it.effect("a tampered body, a wrong secret or a changed timestamp → 401 invalid_signature, nothing done", () =>
    run(Effect.gen(function*() {
      const headers = signedHeaders(createBody)
      const tampered = createBody.replace("\"quantity\":1", "\"quantity\":9")
      const cases = [
        yield* signed("POST", "/checkout_sessions", tampered, headers),
        yield* signed("POST", "/checkout_sessions", createBody, signedHeaders(createBody, { secret: "sig_other" })),
        yield* signed("POST", "/checkout_sessions", createBody, { ...headers, timestamp: String(nowSeconds + 1) }),
        yield* signed("POST", "/checkout_sessions", createBody, { ...headers, signature: "not-base64!" })
      ]
      for (const response of cases) {
        expect(response.status).toBe(401)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "invalid_signature",
          message: expect.any(String)
        })
      }
      // Nothing was reserved: the whole stock of the print is still available.
      const all = JSON.stringify({ items: [{ id: "print-limited", quantity: 3 }] })
      expect((yield* signed("POST", "/checkout_sessions", all, signedHeaders(all))).status).toBe(201)
    })))

  it.effect("a timestamp more than 300 s away → 401; exactly 300 s is accepted", () =>
    run(Effect.gen(function*() {
      const stale = yield* signed(
        "POST",
        "/checkout_sessions",
        createBody,
        signedHeaders(createBody, { timestamp: String(nowSeconds - 301) })
      )
      expect(stale.status).toBe(401)
      expect(stale.body.code).toBe("invalid_signature")
      expect(stale.body.message).toContain("old")
      const future = yield* signed(
        "POST",
        "/checkout_sessions",
        createBody,
        signedHeaders(createBody, { timestamp: String(nowSeconds + 301) })
      )
      expect(future.status).toBe(401)
      const edge = yield* signed(
        "POST",
        "/checkout_sessions",
        createBody,
        signedHeaders(createBody, { timestamp: String(nowSeconds - 300) })
      )
      expect(edge.status).toBe(201)
      // The Clock decides: the same signed request is stale ten minutes later.
      const headers = signedHeaders(createBody)
      yield* TestClock.adjust("10 minutes")
      expect((yield* signed("POST", "/checkout_sessions", createBody, headers)).status).toBe(401)
    })))

  it.effect("missing Signature or Timestamp → 401 invalid_signature; authentication is checked first", () =>
    run(Effect.gen(function*() {
      const { signature, timestamp } = signedHeaders(createBody)
      for (const headers of [{}, { signature }, { timestamp }]) {
        const response = yield* signed("POST", "/checkout_sessions", createBody, headers)
        expect(response.status).toBe(401)
        expect(response.body.code).toBe("invalid_signature")
        expect(response.body.message).toContain("required")
      }
      const unauthenticated = yield* signed("POST", "/checkout_sessions", createBody, {}, { auth: false })
      expect(unauthenticated.body.code).toBe("unauthorized")
      const noVersion = yield* signed("GET", "/checkout_sessions/cs_x", "", {}, { version: false })
      expect(noVersion.body.code).toBe("missing_api_version")
      // Public routes are not signed.
      expect((yield* get("/healthz", { auth: false, version: false })).status).toBe(200)
    })))

  it.effect("the body limit still applies: an oversized signed body is 413, not a signature error", () =>
    run(Effect.gen(function*() {
      const big = JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 1 }], pad: "x".repeat(1024 * 1024) })
      const response = yield* signed("POST", "/checkout_sessions", big, signedHeaders(big))
      expect(response.status).toBe(413)
    })))
})

describe("request signatures and idempotent replays", () => {
  it.effect("a stored answer is replayed only to a signed request; an unsigned or stale retry is 401", () =>
    run(Effect.gen(function*() {
      const key = { "idempotency-key": "signed-1" }
      const first = yield* signed("POST", "/checkout_sessions", createBody, { ...signedHeaders(createBody), ...key })
      expect(first.status).toBe(201)
      const unsigned = yield* signed("POST", "/checkout_sessions", createBody, key)
      const stale = yield* signed("POST", "/checkout_sessions", createBody, {
        ...signedHeaders(createBody, { timestamp: String(nowSeconds - 301) }),
        ...key
      })
      for (const refused of [unsigned, stale]) {
        expect(refused.status).toBe(401)
        expect(refused.body.code).toBe("invalid_signature")
        expect(refused.headers.get("idempotent-replayed")).toBeNull()
        expect(refused.text).not.toContain(first.body.id)
      }
      const replay = yield* signed("POST", "/checkout_sessions", createBody, { ...signedHeaders(createBody), ...key })
      expect(replay.status).toBe(201)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.body.id).toBe(first.body.id)
    })))
})

describe("request signatures not configured", () => {
  it.effect("Signature and Timestamp are accepted and ignored, valid or not", () =>
    run(
      Effect.gen(function*() {
        const bogus = { signature: "garbage", timestamp: "yesterday" }
        const created = yield* signed("POST", "/checkout_sessions", createBody, bogus)
        expect(created.status).toBe(201)
        expect((yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] })).status).toBe(201)
        expect((yield* get(`/checkout_sessions/${created.body.id}`, { headers: bogus })).status).toBe(200)
      }),
      testApp()
    ))
})
