/**
 * POST /agentic_commerce/delegate_payment through the HTTP application (in memory, TestClock): the
 * rate limit per API key (429 with Retry-After), authentication, the API-Version check, the
 * method, the delegate role, the OpenAPI document, and storage failures (503 and 500, no details).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, TestClock } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { CARD_NUMBER, DELEGATE_PATH, delegateRequestWith, validDelegateRequest } from "../support/delegate.ts"
import { get, post } from "../support/http.ts"
import { run, tokenize } from "./delegate-api-fixtures.ts"

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
        expect(discovery.body.capabilities.services).toEqual(["checkout", "orders", "carts"])
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
