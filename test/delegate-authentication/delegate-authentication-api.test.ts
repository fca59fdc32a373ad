/**
 * The Delegate Authentication API (the built-in issuer authentication provider, ACP 2026-04-17)
 * through HTTP: each test card's flow, the simulated ACS pages, refusals in the API's closed error
 * object, idempotency, rate limit, roles, expiry on the Clock, and no card number anywhere.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, TestClock } from "effect"
import { ALL_ROLES, type AppConfigShape } from "../../src/platform/config.ts"
import { freshMemoryDatabase, MemoryDatabase } from "../doubles/memory-database.ts"
import { request, testApp, type TestResponse } from "../support/http.ts"
import { browserChannel } from "../support/three-d-secure.ts"

const VERSION = "2026-04-17"
const CHALLENGE_CARD = "4000002760003184"
const FRICTIONLESS_CARD = "4000000000003220"
const FAILING_CARD = "4000000000003063"
const ATTEMPTED_CARD = "4000000000003097"
const NOT_ENROLLED_CARD = "4242424242424242"
const NOTIFY = "https://agent.example/3ds/challenge-callback"

const channel = browserChannel

const createBody = (number: string, extra: Record<string, unknown> = {}) => ({
  merchant_id: "merchant_test",
  payment_method: { type: "card", number, exp_month: "12", exp_year: "2030", name: "Ada Lovelace" },
  amount: { value: 5375, currency: "USD" },
  checkout_session_id: "cs_123",
  ...extra
})

const run = <A, E>(effect: Effect.Effect<A, E, any>, config: Partial<AppConfigShape> = {}) =>
  Effect.provide(effect, Layer.merge(testApp({ config }), freshMemoryDatabase)) as Effect.Effect<A, E, never>

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  request("POST", path, { body, version: VERSION, headers })
const get = (path: string) => request("GET", path, { version: VERSION })
const form = (url: string, fields: Record<string, string>) =>
  request("POST", new URL(url).pathname, {
    body: new URLSearchParams(fields).toString(),
    contentType: "application/x-www-form-urlencoded",
    auth: false,
    version: false
  })

const created = (number: string, extra: Record<string, unknown> = {}) =>
  Effect.map(post("/delegate_authentication", createBody(number, extra)), (response) => {
    expect(response.status, response.text).toBe(201)
    return response.body as { authentication_session_id: string; status: string; action?: any }
  })

const creqFor = (challenge: { acs_trans_id: string; three_ds_server_trans_id: string }) =>
  Buffer.from(JSON.stringify({
    threeDSServerTransID: challenge.three_ds_server_trans_id,
    acsTransID: challenge.acs_trans_id,
    messageVersion: "2.2.0",
    messageType: "CReq",
    challengeWindowSize: "05"
  })).toString("base64url")

const expectApiError = (response: TestResponse, status: number, code: string, param?: string) => {
  expect(response.status, response.text).toBe(status)
  expect(Object.keys(response.body).sort()).toEqual(
    param === undefined ? ["code", "message", "type"] : ["code", "message", "param", "type"]
  )
  expect(response.body.code).toBe(code)
  if (param !== undefined) expect(response.body.param).toBe(param)
}

/** The challenge card up to its challenge: the action to answer. */
const challenged = Effect.gen(function*() {
  const session = yield* created(CHALLENGE_CARD, { channel, challenge_notification_url: NOTIFY })
  expect(session.status).toBe("action_required")
  expect(session.action.type).toBe("fingerprint")
  const authenticated = yield* post(`/delegate_authentication/${session.authentication_session_id}/authenticate`, {
    fingerprint_completion: "Y"
  })
  expect(authenticated.status).toBe(200)
  expect(authenticated.body.status).toBe("action_required")
  expect(authenticated.body.action.type).toBe("challenge")
  return { id: session.authentication_session_id, challenge: authenticated.body.action.challenge }
})

describe("Delegate Authentication API", () => {
  it.effect("frictionless card: pending, then authenticated; GET carries the result", () =>
    run(Effect.gen(function*() {
      const session = yield* created(FRICTIONLESS_CARD)
      expect(session).toEqual({ authentication_session_id: expect.stringMatching(/^authn_/), status: "pending" })
      const id = session.authentication_session_id
      const authenticated = yield* post(`/delegate_authentication/${id}/authenticate`, {
        fingerprint_completion: "U",
        channel
      })
      expect(authenticated.body).toEqual({ authentication_session_id: id, status: "authenticated" })
      const read = yield* get(`/delegate_authentication/${id}`)
      expect(read.status).toBe(200)
      expect(read.body.authentication_result).toEqual({
        trans_status: "Y",
        electronic_commerce_indicator: "05",
        three_ds_cryptogram: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/),
        authentication_value: read.body.authentication_result.three_ds_cryptogram,
        transaction_id: expect.any(String),
        three_ds_server_trans_id: expect.any(String),
        version: "2.2.0"
      })
    })))

  it.effect("attempted card: pending, then attempted (A, ECI 06) with a cryptogram", () =>
    run(Effect.gen(function*() {
      const { authentication_session_id: id } = yield* created(ATTEMPTED_CARD, { channel })
      const answer = yield* post(`/delegate_authentication/${id}/authenticate`, { fingerprint_completion: "U" })
      expect(answer.body).toEqual({ authentication_session_id: id, status: "attempted" })
      const result = (yield* get(`/delegate_authentication/${id}`)).body.authentication_result
      expect(result).toMatchObject({ trans_status: "A", electronic_commerce_indicator: "06", version: "2.2.0" })
      expect(result.three_ds_cryptogram).toMatch(/^[A-Za-z0-9+/]{27}=$/)
    })))

  it.effect("failing card: not_authenticated (N, reason 01) without a cryptogram", () =>
    run(Effect.gen(function*() {
      const { authentication_session_id: id } = yield* created(FAILING_CARD, { channel })
      const answer = yield* post(`/delegate_authentication/${id}/authenticate`, { fingerprint_completion: "U" })
      expect(answer.body.status).toBe("not_authenticated")
      const result = (yield* get(`/delegate_authentication/${id}`)).body.authentication_result
      expect(result).toMatchObject({
        trans_status: "N",
        trans_status_reason: "01",
        electronic_commerce_indicator: "07"
      })
      expect(result.three_ds_cryptogram).toBeUndefined()
    })))

  it.effect("a card not enrolled is not_supported and cannot be authenticated (409 duplicate_request)", () =>
    run(Effect.gen(function*() {
      const session = yield* created(NOT_ENROLLED_CARD, { channel })
      expect(session.status).toBe("not_supported")
      const again = yield* post(`/delegate_authentication/${session.authentication_session_id}/authenticate`, {
        fingerprint_completion: "U"
      })
      expectApiError(again, 409, "duplicate_request")
    })))

  it.effect("challenge card: the ACS page asks for the code; 123456 authenticates and the CRes goes to the agent", () =>
    run(Effect.gen(function*() {
      const { challenge, id } = yield* challenged
      expect(challenge.acs_url).toMatch(new RegExp(`/delegate_authentication/${id}/acs/challenge$`))
      const creq = creqFor(challenge)
      const pageResponse = yield* form(challenge.acs_url, { creq })
      expect(pageResponse.status).toBe(200)
      expect(pageResponse.headers.get("content-type")).toContain("text/html")
      expect(pageResponse.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(pageResponse.text).toContain("name=\"code\"")
      expect(pageResponse.text).not.toContain(CHALLENGE_CARD)
      expect(pageResponse.text).toContain("3184")
      const answered = yield* form(challenge.acs_url, { creq, code: "123456" })
      expect(answered.status).toBe(200)
      expect(answered.text).toContain(`action="${NOTIFY}"`)
      const cres = /name="cres" value="([^"]+)"/.exec(answered.text)![1]!
      expect(JSON.parse(Buffer.from(cres, "base64url").toString())).toMatchObject({
        messageType: "CRes",
        transStatus: "Y"
      })
      const read = yield* get(`/delegate_authentication/${id}`)
      expect(read.body.status).toBe("authenticated")
      expect(read.body.authentication_result.trans_status).toBe("Y")
      // The challenge is answered once.
      expect((yield* form(challenge.acs_url, { creq, code: "123456" })).status).toBe(409)
    })))

  it.effect("challenge: a wrong code fails (N), an abandoned one is challenge_abandoned (U)", () =>
    run(Effect.gen(function*() {
      const wrong = yield* challenged
      yield* form(wrong.challenge.acs_url, { creq: creqFor(wrong.challenge), code: "000000" })
      expect((yield* get(`/delegate_authentication/${wrong.id}`)).body.status).toBe("not_authenticated")
      const left = yield* challenged
      yield* form(left.challenge.acs_url, { creq: creqFor(left.challenge), abandon: "1" })
      const read = yield* get(`/delegate_authentication/${left.id}`)
      expect(read.body.status).toBe("challenge_abandoned")
      expect(read.body.authentication_result.trans_status).toBe("U")
    })))

  it.effect("the ACS pages take forms only: a multipart or JSON body is 400 invalid_content_type, at once", () =>
    run(Effect.gen(function*() {
      const { challenge } = yield* challenged
      const path = new URL(challenge.acs_url).pathname
      for (
        const [contentType, body] of [
          ["multipart/form-data; boundary=x", ""],
          ["multipart/form-data; boundary=x", "--x\r\nnot a part"],
          ["multipart/form-data", "creq=abc"],
          ["application/json", JSON.stringify({ creq: creqFor(challenge) })]
        ] as const
      ) {
        const refused = yield* request("POST", path, { body, contentType, auth: false, version: false })
        expect(refused.status, contentType).toBe(400)
        expect(refused.body).toMatchObject({ code: "invalid_content_type" })
      }
      expect((yield* form(challenge.acs_url, { creq: creqFor(challenge) })).status).toBe(200)
    })))

  it.effect("the ACS refuses a CReq of another transaction (404 page) and a malformed one (400 page)", () =>
    run(Effect.gen(function*() {
      const { challenge } = yield* challenged
      const other = creqFor({ ...challenge, acs_trans_id: "not-this-one" })
      expect((yield* form(challenge.acs_url, { creq: other, code: "123456" })).status).toBe(404)
      expect((yield* form(challenge.acs_url, { creq: "%%%", code: "123456" })).status).toBe(400)
    })))

  it.effect("refusals: channel missing, challenge URL missing, invalid card, amount, unknown session", () =>
    run(Effect.gen(function*() {
      const frictionless = yield* created(FRICTIONLESS_CARD)
      expectApiError(
        yield* post(`/delegate_authentication/${frictionless.authentication_session_id}/authenticate`, {
          fingerprint_completion: "U"
        }),
        400,
        "invalid_card",
        "$.channel"
      )
      const challenge = yield* created(CHALLENGE_CARD, { channel })
      expectApiError(
        yield* post(`/delegate_authentication/${challenge.authentication_session_id}/authenticate`, {
          fingerprint_completion: "Y"
        }),
        400,
        "invalid_card",
        "$.challenge_notification_url"
      )
      expectApiError(
        yield* post("/delegate_authentication", createBody("4000002760003185")),
        400,
        "invalid_card",
        "$.payment_method.number"
      )
      expectApiError(
        yield* post("/delegate_authentication", {
          ...createBody(FRICTIONLESS_CARD),
          amount: { value: 0, currency: "USD" }
        }),
        400,
        "invalid_card",
        "$.amount.value"
      )
      expectApiError(
        yield* post("/delegate_authentication", {
          ...createBody(FRICTIONLESS_CARD),
          amount: { value: 1, currency: "usd" }
        }),
        400,
        "invalid_card",
        "$.amount.currency"
      )
      expectApiError(
        yield* get("/delegate_authentication/authn_nope"),
        404,
        "invalid_card",
        "$.authentication_session_id"
      )
    })))

  it.effect("a session is visible to the API key that created it only", () =>
    run(
      Effect.gen(function*() {
        const { authentication_session_id: id } = yield* created(FRICTIONLESS_CARD)
        const foreign = yield* request("GET", `/delegate_authentication/${id}`, {
          version: VERSION,
          auth: "sk_test_other"
        })
        expectApiError(foreign, 404, "invalid_card", "$.authentication_session_id")
        expect((yield* get(`/delegate_authentication/${id}`)).status).toBe(200)
      }),
      { apiKeys: [Redacted.make("sk_test_key"), Redacted.make("sk_test_other")] }
    ))

  it.effect("API-Version other than 2026-04-17: 400 unsupported_api_version; no key: 401 in the API's error object", () =>
    run(Effect.gen(function*() {
      const older = yield* request("POST", "/delegate_authentication", {
        body: createBody(FRICTIONLESS_CARD),
        version: "2026-01-30"
      })
      expect(older.status).toBe(400)
      expect(older.body.code).toBe("unsupported_api_version")
      expect(older.body.supported_versions).toEqual(["2026-04-17"])
      const anonymous = yield* request("POST", "/delegate_authentication", {
        body: createBody(FRICTIONLESS_CARD),
        version: VERSION,
        auth: false
      })
      expectApiError(anonymous, 401, "invalid_card")
      expect(anonymous.body.type).toBe("invalid_request")
    })))

  it.effect("idempotent create: the same key replays the session; another body is 409 idempotency_conflict", () =>
    run(Effect.gen(function*() {
      const headers = { "idempotency-key": "authn-key-1" }
      const first = yield* post("/delegate_authentication", createBody(FRICTIONLESS_CARD), headers)
      const again = yield* post("/delegate_authentication", createBody(FRICTIONLESS_CARD), headers)
      expect(again.text).toBe(first.text)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      const other = yield* post("/delegate_authentication", createBody(FAILING_CARD), headers)
      expectApiError(other, 409, "idempotency_conflict")
    })))

  it.effect("rate limited per API key: 429 rate_limit_exceeded with Retry-After", () =>
    run(
      Effect.gen(function*() {
        yield* created(FRICTIONLESS_CARD)
        yield* created(FRICTIONLESS_CARD)
        const limited = yield* post("/delegate_authentication", createBody(FRICTIONLESS_CARD))
        expect(limited.status).toBe(429)
        expect(limited.body.type).toBe("rate_limit_exceeded")
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
      }),
      { delegateRateLimitPerMinute: 2 }
    ))

  it.effect("expiry on the Clock: after 600 s the session shows expired, without its result", () =>
    run(Effect.gen(function*() {
      const { authentication_session_id: id } = yield* created(FRICTIONLESS_CARD, { channel })
      yield* post(`/delegate_authentication/${id}/authenticate`, { fingerprint_completion: "U" })
      yield* TestClock.adjust("599 seconds")
      expect((yield* get(`/delegate_authentication/${id}`)).body.status).toBe("authenticated")
      yield* TestClock.adjust("1 second")
      const read = yield* get(`/delegate_authentication/${id}`)
      expect(read.body).toEqual({ authentication_session_id: id, status: "expired" })
      const late = yield* created(CHALLENGE_CARD, { channel, challenge_notification_url: NOTIFY })
      yield* TestClock.adjust("600 seconds")
      const authenticate = yield* post(`/delegate_authentication/${late.authentication_session_id}/authenticate`, {
        fingerprint_completion: "Y"
      })
      expect(authenticate.body.status).toBe("expired")
    })))

  it.effect("with the role off, every route is an unknown route (404)", () =>
    run(
      Effect.gen(function*() {
        expect((yield* post("/delegate_authentication", createBody(FRICTIONLESS_CARD))).status).toBe(404)
        expect((yield* get("/delegate_authentication/authn_x")).status).toBe(404)
      }),
      { roles: new Set(ALL_ROLES.filter((role) => role !== "delegate_authentication")) }
    ))

  it.effect("the card number is kept nowhere: neither in answers nor in the store", () =>
    run(Effect.gen(function*() {
      const { challenge, id } = yield* challenged
      yield* form(challenge.acs_url, { creq: creqFor(challenge), code: "123456" })
      const read = yield* get(`/delegate_authentication/${id}`)
      expect(read.text).not.toContain(CHALLENGE_CARD)
      const db = yield* MemoryDatabase
      const stored = JSON.stringify([...db.table("authentication_sessions").values()])
      expect(stored).toContain(id)
      expect(stored).not.toContain(CHALLENGE_CARD)
    })))

  it.effect("a card number anywhere but payment_method.number is refused, naming the field: nothing is kept", () =>
    run(Effect.gen(function*() {
      const misplaced = [
        ["$.merchant_id", { ...createBody(FRICTIONLESS_CARD), merchant_id: FRICTIONLESS_CARD }],
        ["$.checkout_session_id", { ...createBody(FRICTIONLESS_CARD), checkout_session_id: `cs ${CHALLENGE_CARD}` }]
      ] as const
      for (const [param, body] of misplaced) {
        const refused = yield* post("/delegate_authentication", body)
        expectApiError(refused, 400, "invalid_card", param)
        expect(refused.text).not.toContain(FRICTIONLESS_CARD)
        expect(refused.text).not.toContain(CHALLENGE_CARD)
      }
      const db = yield* MemoryDatabase
      expect([...db.table("authentication_sessions").values()]).toEqual([])
      const session = yield* created(CHALLENGE_CARD, { channel })
      expectApiError(
        yield* post(`/delegate_authentication/${session.authentication_session_id}/authenticate`, {
          fingerprint_completion: "Y",
          challenge_notification_url: `https://agent.example/3ds?pan=${CHALLENGE_CARD}`
        }),
        400,
        "invalid_card",
        "$.challenge_notification_url"
      )
    })))
})
