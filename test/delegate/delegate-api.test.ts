/**
 * POST /agentic_commerce/delegate_payment through the HTTP application (in memory, TestClock).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, TestClock } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { VaultStore } from "../../src/delegate/vault-store.ts"
import { Vault } from "../../src/delegate/vault.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import {
  CARD_CVC,
  CARD_NUMBER,
  DELEGATE_PATH,
  delegateRequestWith,
  NoPayments,
  NOW,
  validDelegateRequest
} from "../support/delegate.ts"
import { get, post, testApp, type TestAppOptions } from "../support/http.ts"

/** The app plus its vault store (the same one: on the app's memory database), so tests can look at what was stored. */
const appWithStore = (options: TestAppOptions = {}) => {
  const vaultStore = options.vaultStore ?? MemoryVaultStore
  return Layer.merge(testApp({ payments: NoPayments, ...options, vaultStore }), Layer.orDie(vaultStore)).pipe(
    Layer.provide(freshMemoryDatabase)
  )
}

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW), effect),
    appWithStore(options)
  ) as Effect.Effect<A, E, never>

const runLive = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, appWithStore(options)) as Effect.Effect<A, E, never>

const tokenize = (body: unknown, headers?: Record<string, string>) =>
  post(DELEGATE_PATH, body, headers !== undefined ? { headers } : {})

describe("POST /agentic_commerce/delegate_payment: success", () => {
  it.effect("201 with a vt_ id, the Clock's time and the metadata echo; the card is stored encrypted", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(validDelegateRequest())
      expect(response.status).toBe(201)
      expect(response.body.id).toMatch(/^vt_[0-9A-Za-z]{22}$/)
      expect(response.body).toEqual({
        id: response.body.id,
        created: "2026-01-30T12:00:00.000Z",
        metadata: { source: "agent", merchant_id: "merchant_test" }
      })
      expect(response.text).not.toContain(CARD_NUMBER)

      const store = yield* VaultStore
      const record = Option.getOrThrow(yield* store.getToken(response.body.id))
      expect(record).toMatchObject({
        id: response.body.id,
        clientKeyId: expect.stringMatching(/^key_/),
        allowance: {
          reason: "one_time",
          max_amount: 2000,
          currency: "usd",
          checkout_session_id: "cs_123",
          merchant_id: "merchant_test",
          expiresAt: Date.parse("2099-01-30T13:00:00Z")
        },
        riskSignals: [{ type: "card_testing", score: 10, action: "authorized" }],
        metadata: { source: "agent", merchant_id: "merchant_test" },
        createdAt: NOW,
        brand: "visa",
        last4: "4242",
        funding: "credit",
        state: "active"
      })
      expect(JSON.stringify(record)).not.toContain(CARD_NUMBER)
      expect(JSON.stringify(record)).not.toContain(`"${CARD_CVC}"`)

      const card = yield* (yield* Vault).revealCard(record)
      expect(card).toMatchObject({
        card_number_type: "fpan",
        number: CARD_NUMBER,
        cvc: CARD_CVC,
        exp_month: "12",
        exp_year: "2030",
        name: "Jane Doe"
      })
      expect(card.billing_address?.postal_code).toBe("62701")
    })))

  it.effect("metadata: request pairs echoed, merchant_id from the allowance wins", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.metadata = { order_ref: "A-1", merchant_id: "spoofed", "ünï": "cödé ✓" }
        r.allowance.merchant_id = "merchant_9"
      })
      const plain = yield* tokenize(body)
      expect(plain.status).toBe(201)
      expect(plain.body.metadata).toEqual({ order_ref: "A-1", merchant_id: "merchant_9", "ünï": "cödé ✓" })
      const empty = yield* tokenize(delegateRequestWith((r) => {
        r.metadata = {}
      }))
      expect(empty.body.metadata).toEqual({ merchant_id: "merchant_test" })
    })))

  it.effect("metadata: an idempotency_key the client sends is not echoed as if it were the header", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(delegateRequestWith((r) => {
        r.metadata = { idempotency_key: "spoofed", note: "emoji 😀 kept" }
      }))
      expect(response.status).toBe(201)
      expect(response.body.metadata).toEqual({ note: "emoji 😀 kept", merchant_id: "merchant_test" })
    })))

  it.effect("payment_method.metadata is any JSON object; expires_at may be the last instant of year 9999", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(delegateRequestWith((r) => {
        r.payment_method.metadata = { bank: true, tries: 2, issuer: { country: "US" }, tags: ["a"], none: null }
        r.allowance.expires_at = "9999-12-31T23:59:59.999Z"
      }))
      expect(response.status).toBe(201)
    })))

  // Real clock: the idempotency middleware in front of every POST keeps a lease on the Clock.
  it.live("metadata: idempotency_key added when an Idempotency-Key is given", () =>
    runLive(Effect.gen(function*() {
      const keyed = yield* tokenize(validDelegateRequest(), { "idempotency-key": "idem_abc_123" })
      expect(keyed.status).toBe(201)
      expect(keyed.body.metadata).toEqual({
        source: "agent",
        merchant_id: "merchant_test",
        idempotency_key: "idem_abc_123"
      })
    })))

  it.effect("network tokens skip the card-number checks; brand is detected when not displayed; unknown fields are ignored", () =>
    run(Effect.gen(function*() {
      const response = yield* tokenize(delegateRequestWith((r) => {
        r.payment_method.card_number_type = "network_token"
        r.payment_method.number = "5555555555554440" // fails Luhn: fine for a network token
        delete r.payment_method.iin
        delete r.payment_method.display_last4
        delete r.payment_method.display_brand
        r.payment_method.cryptogram = "AAAAAAAA"
        r.future_field = { x: 1 }
      }))
      expect(response.status).toBe(201)
      const record = Option.getOrThrow(yield* (yield* VaultStore).getToken(response.body.id))
      expect(record).toMatchObject({ brand: "mastercard", last4: "4440" })
    })))
})

describe("POST /agentic_commerce/delegate_payment: validation", () => {
  const rules: ReadonlyArray<readonly [string, 400 | 422, string, (r: Record<string, any>) => void]> = [
    // 400: decoding
    ["empty object", 400, "$.payment_method", (r) => Object.keys(r).forEach((k) => delete r[k])],
    ["payment_method missing", 400, "$.payment_method", (r) => delete r.payment_method],
    ["type not card", 400, "$.payment_method.type", (r) => (r.payment_method.type = "bank")],
    [
      "card_number_type unknown",
      400,
      "$.payment_method.card_number_type",
      (r) => (r.payment_method.card_number_type = "dpan")
    ],
    ["number with letters", 400, "$.payment_method.number", (r) => (r.payment_method.number = "4242x42424242424")],
    ["number too short", 400, "$.payment_method.number", (r) => (r.payment_method.number = "42424242")],
    ["exp_month 13", 400, "$.payment_method.exp_month", (r) => (r.payment_method.exp_month = "13")],
    ["exp_year two digits", 400, "$.payment_method.exp_year", (r) => (r.payment_method.exp_year = "30")],
    ["cvc two digits", 400, "$.payment_method.cvc", (r) => (r.payment_method.cvc = "98")],
    ["iin five digits", 400, "$.payment_method.iin", (r) => (r.payment_method.iin = "42424")],
    [
      "funding type unknown",
      400,
      "$.payment_method.display_card_funding_type",
      (r) => (r.payment_method.display_card_funding_type = "charge")
    ],
    ["payment_method.metadata missing", 400, "$.payment_method.metadata", (r) => delete r.payment_method.metadata],
    ["allowance reason recurring", 400, "$.allowance.reason", (r) => (r.allowance.reason = "recurring")],
    ["max_amount zero", 400, "$.allowance.max_amount", (r) => (r.allowance.max_amount = 0)],
    ["max_amount fractional", 400, "$.allowance.max_amount", (r) => (r.allowance.max_amount = 10.5)],
    ["currency uppercase", 400, "$.allowance.currency", (r) => (r.allowance.currency = "USD")],
    ["expires_at without zone", 400, "$.allowance.expires_at", (r) => (r.allowance.expires_at = "2099-01-30T13:00:00")],
    [
      "checkout_session_id empty",
      400,
      "$.allowance.checkout_session_id",
      (r) => (r.allowance.checkout_session_id = "")
    ],
    ["billing country three letters", 400, "$.billing_address.country", (r) => (r.billing_address.country = "USA")],
    ["risk_signals empty", 400, "$.risk_signals", (r) => (r.risk_signals = [])],
    ["risk signal action unknown", 400, "$.risk_signals[0].action", (r) => (r.risk_signals[0].action = "allow")],
    ["metadata value not a string", 400, "$.metadata.n", (r) => (r.metadata = { n: 1 })],
    // 400: text PostgreSQL cannot keep (it used to fail the insert: a 500)
    ["NUL in a metadata value", 400, "$.metadata.a", (r) => (r.metadata = { a: "x\u0000y" })],
    ["NUL in a metadata key", 400, "$.metadata[\"a\\u0000\"]", (r) => (r.metadata = { ["a\u0000"]: "x" })],
    ["unpaired surrogate in metadata", 400, "$.metadata.a", (r) => (r.metadata = { a: "x\ud800" })],
    [
      "NUL in checkout_session_id",
      400,
      "$.allowance.checkout_session_id",
      (r) => (r.allowance.checkout_session_id = "cs_\u0000")
    ],
    [
      "NUL in display_brand",
      400,
      "$.payment_method.display_brand",
      (r) => (r.payment_method.display_brand = "vi\u0000sa")
    ],
    [
      "NUL in card metadata",
      400,
      "$.payment_method.metadata.note[0]",
      (r) => (r.payment_method.metadata = { note: ["\u0000"] })
    ],
    [
      "expires_at past year 9999 once its offset is applied",
      400,
      "$.allowance.expires_at",
      (r) => (r.allowance.expires_at = "9999-12-31T23:59:59-23:59")
    ],
    // 422: semantic rules of CONTRACT §7
    ["Luhn", 422, "$.payment_method.number", (r) => (r.payment_method.number = "4242424242424241")],
    ["iin not the number's prefix", 422, "$.payment_method.iin", (r) => (r.payment_method.iin = "555555")],
    [
      "last4 not the number's end",
      422,
      "$.payment_method.display_last4",
      (r) => (r.payment_method.display_last4 = "1111")
    ],
    ["card expired last year", 422, "$.payment_method.exp_year", (r) => (r.payment_method.exp_year = "2025")],
    ["allowance expired", 422, "$.allowance.expires_at", (r) => (r.allowance.expires_at = "2026-01-30T11:59:59Z")],
    ["unknown currency", 422, "$.allowance.currency", (r) => (r.allowance.currency = "zzz")],
    ["unassigned country", 422, "$.billing_address.country", (r) => (r.billing_address.country = "ZZ")],
    [
      "blocked risk signal",
      422,
      "$.risk_signals[1]",
      (r) => r.risk_signals.push({ type: "card_testing", score: 99, action: "blocked" })
    ]
  ]
  for (const [name, status, param, mutate] of rules) {
    it.effect(`${status} invalid_card ${param}: ${name}`, () =>
      run(Effect.gen(function*() {
        const response = yield* tokenize(delegateRequestWith(mutate))
        expect(response.status).toBe(status)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "invalid_card",
          message: expect.any(String),
          param
        })
        expect(response.text).not.toContain(CARD_NUMBER)
      })))
  }

  it.effect("the body may not be JSON null, an array or a number", () =>
    run(Effect.gen(function*() {
      for (const body of ["null", "[]", "42"]) {
        const response = yield* tokenize(body)
        expect(response.status).toBe(400)
        expect(response.body).toMatchObject({ type: "invalid_request", code: "invalid_card", param: "$" })
      }
    })))

  it.effect("common body rules: content type, malformed JSON, empty body, more than 1 MiB", () =>
    run(Effect.gen(function*() {
      const text = yield* post(DELEGATE_PATH, JSON.stringify(validDelegateRequest()), { contentType: "text/plain" })
      expect(text.status).toBe(400)
      expect(text.body).toMatchObject({ type: "invalid_request", code: "invalid_content_type" })
      const malformed = yield* tokenize(`{"payment_method": {"number": "${CARD_NUMBER}"`)
      expect(malformed.status).toBe(400)
      expect(malformed.body).toMatchObject({ type: "invalid_request", code: "invalid_json" })
      expect(malformed.text).not.toContain(CARD_NUMBER)
      const empty = yield* tokenize("")
      expect(empty.status).toBe(400)
      const large = yield* tokenize(delegateRequestWith((r) => (r.metadata = { pad: "x".repeat(1024 * 1024) })))
      expect(large.status).toBe(413)
      expect(large.body).toMatchObject({ code: "request_too_large" })
    })))
})

describe("POST /agentic_commerce/delegate_payment: expiry at the Clock's time", () => {
  it.effect("a card is valid through the last millisecond of its expiry month (UTC)", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.payment_method.exp_month = "01"
        r.payment_method.exp_year = "2026"
      })
      yield* TestClock.setTime(Date.parse("2026-01-31T23:59:59.999Z"))
      expect((yield* tokenize(body)).status).toBe(201)
      yield* TestClock.setTime(Date.parse("2026-02-01T00:00:00.000Z"))
      const expired = yield* tokenize(body)
      expect(expired.status).toBe(422)
      // CONTRACT §7: exp_year, also when only the month is past.
      expect(expired.body).toMatchObject({ code: "invalid_card", param: "$.payment_method.exp_year" })
      yield* TestClock.setTime(Date.parse("2027-01-01T00:00:00.000Z"))
      const nextYear = yield* tokenize(body)
      expect(nextYear.body.param).toBe("$.payment_method.exp_year")
    })))

  it.effect("a card expiring in December is valid on Dec 31 and expired on Jan 1 (year boundary)", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.payment_method.exp_month = "12"
        r.payment_method.exp_year = "2026"
        r.allowance.expires_at = "2030-01-01T00:00:00Z"
      })
      yield* TestClock.setTime(Date.parse("2026-12-31T23:59:59.999Z"))
      expect((yield* tokenize(body)).status).toBe(201)
      yield* TestClock.setTime(Date.parse("2027-01-01T00:00:00.000Z"))
      const expired = yield* tokenize(body)
      expect(expired.status).toBe(422)
      expect(expired.body.param).toBe("$.payment_method.exp_year")
    })))

  it.effect("allowance.expires_at must be strictly after now (offsets honoured)", () =>
    run(Effect.gen(function*() {
      const at = (expires_at: string) => tokenize(delegateRequestWith((r) => (r.allowance.expires_at = expires_at)))
      expect((yield* at("2026-01-30T12:00:00.001Z")).status).toBe(201)
      expect((yield* at("2026-01-30T13:00:01+01:00")).status).toBe(201)
      const equal = yield* at("2026-01-30T12:00:00Z")
      expect(equal.status).toBe(422)
      expect(equal.body.param).toBe("$.allowance.expires_at")
      expect((yield* at("2026-01-30T13:00:00+01:00")).status).toBe(422)
      yield* TestClock.adjust("1 second")
      expect((yield* at("2026-01-30T12:00:01.000Z")).status).toBe(422)
      expect((yield* at("2026-01-30T12:00:01.001Z")).status).toBe(201)
    })))
})

describe("POST /agentic_commerce/delegate_payment: rate limit per API key", () => {
  const keys = { apiKeys: [Redacted.make("sk_test_key"), Redacted.make("sk_other_key")], delegateRateLimitPerMinute: 3 }

  it.effect("429 rate_limit_exceeded with Retry-After once the budget is spent; recovers after the wait", () =>
    run(
      Effect.gen(function*() {
        // Invalid requests count too (card testing).
        expect((yield* tokenize(validDelegateRequest())).status).toBe(201)
        expect((yield* tokenize(delegateRequestWith((r) => (r.payment_method.number = "4242424242424241")))).status)
          .toBe(422)
        expect((yield* tokenize(validDelegateRequest())).status).toBe(201)
        const limited = yield* tokenize(validDelegateRequest())
        expect(limited.status).toBe(429)
        expect(limited.body).toEqual({
          type: "rate_limit_exceeded",
          code: "too_many_requests",
          message: expect.any(String)
        })
        expect(limited.headers.get("retry-after")).toBe("20") // 3 per minute: one token every 20 s

        // Another key has its own budget.
        const other = yield* post(DELEGATE_PATH, validDelegateRequest(), { auth: "sk_other_key" })
        expect(other.status).toBe(201)

        yield* TestClock.adjust("19 seconds")
        const still = yield* tokenize(validDelegateRequest())
        expect(still.status).toBe(429)
        expect(still.headers.get("retry-after")).toBe("1")
        yield* TestClock.adjust("1 second")
        const recovered = yield* tokenize(validDelegateRequest())
        expect(recovered.status).toBe(201)
        expect(recovered.headers.get("retry-after")).toBeNull()
      }),
      { config: keys }
    ))

  it.effect("unauthenticated requests are refused before they spend any budget", () =>
    run(
      Effect.gen(function*() {
        for (let i = 0; i < 5; i++) {
          expect((yield* post(DELEGATE_PATH, validDelegateRequest(), { auth: "sk_wrong" })).status).toBe(401)
        }
        expect((yield* tokenize(validDelegateRequest())).status).toBe(201)
      }),
      { config: keys }
    ))
})

describe("POST /agentic_commerce/delegate_payment: common rules and roles", () => {
  it.effect("401 unauthorized without or with an unknown bearer key", () =>
    run(Effect.gen(function*() {
      const none = yield* post(DELEGATE_PATH, validDelegateRequest(), { auth: false })
      expect(none.status).toBe(401)
      expect(none.body).toEqual({ type: "invalid_request", code: "unauthorized", message: expect.any(String) })
      const wrong = yield* post(DELEGATE_PATH, validDelegateRequest(), { auth: "sk_nope" })
      expect(wrong.status).toBe(401)
    })))

  it.effect("400 missing_api_version / unsupported_api_version", () =>
    run(Effect.gen(function*() {
      const missing = yield* post(DELEGATE_PATH, validDelegateRequest(), { version: false })
      expect(missing.status).toBe(400)
      expect(missing.body).toMatchObject({ code: "missing_api_version", supported_versions: expect.any(Array) })
      const unsupported = yield* post(DELEGATE_PATH, validDelegateRequest(), { version: "2020-01-01" })
      expect(unsupported.status).toBe(400)
      expect(unsupported.body.code).toBe("unsupported_api_version")
    })))

  it.effect("GET on the route is 405 with Allow: POST", () =>
    run(Effect.gen(function*() {
      const response = yield* get(DELEGATE_PATH)
      expect(response.status).toBe(405)
      expect(response.headers.get("allow")).toBe("POST")
    })))

  it.effect("without the delegate role the route answers 404 not_found, before authentication", () =>
    run(
      Effect.gen(function*() {
        const response = yield* tokenize(validDelegateRequest())
        expect(response.status).toBe(404)
        expect(response.body).toMatchObject({ type: "invalid_request", code: "not_found" })
        const anonymous = yield* post(DELEGATE_PATH, validDelegateRequest(), { auth: false })
        expect(anonymous.status).toBe(404)
        const discovery = yield* get("/.well-known/acp.json")
        expect(discovery.body.capabilities.services).toEqual(["checkout", "orders"])
      }),
      { config: { roles: new Set(["checkout"] as const) } }
    ))

  it.effect("the checkout role off does not affect the delegate route", () =>
    run(
      Effect.gen(function*() {
        expect((yield* tokenize(validDelegateRequest())).status).toBe(201)
      }),
      { config: { roles: new Set(["delegate"] as const) } }
    ))

  it.effect("OpenAPI documents the route with its statuses", () =>
    run(Effect.gen(function*() {
      const response = yield* get("/openapi.json")
      const operation = response.body.paths[DELEGATE_PATH].post
      expect(Object.keys(operation.responses).sort()).toEqual(
        expect.arrayContaining(["201", "400", "401", "404", "409", "413", "422", "429", "500", "503"])
      )
    })))
})

describe("POST /agentic_commerce/delegate_payment: storage failures", () => {
  const failingStore = (reason: "unavailable" | "failure") =>
    Layer.effect(
      VaultStore,
      Effect.map(MemoryVaultStoreService, (memory) =>
        VaultStore.of({
          ...memory,
          insertToken: () => Effect.fail(new StorageError({ reason, cause: new Error(`db said ${CARD_NUMBER}?`) }))
        }))
    )

  it.effect("storage unavailable → 503 service_unavailable with Retry-After", () =>
    run(
      Effect.gen(function*() {
        const response = yield* tokenize(validDelegateRequest())
        expect(response.status).toBe(503)
        expect(response.body).toEqual({
          type: "service_unavailable",
          code: "service_unavailable",
          message: expect.any(String)
        })
        expect(response.headers.get("retry-after")).toBe("5")
      }),
      { vaultStore: failingStore("unavailable") }
    ))

  it.effect("storage failure → 500 processing_error without details", () =>
    run(
      Effect.gen(function*() {
        const response = yield* tokenize(validDelegateRequest())
        expect(response.status).toBe(500)
        expect(response.body).toEqual({
          type: "processing_error",
          code: "processing_error",
          message: expect.any(String)
        })
        expect(response.text).not.toContain(CARD_NUMBER)
      }),
      { vaultStore: failingStore("failure") }
    ))
})

/** The memory store's service, to wrap in failing variants. */
const MemoryVaultStoreService = Effect.provide(VaultStore, MemoryVaultStore.pipe(Layer.provide(freshMemoryDatabase)))
