/**
 * The Delegate Authentication API when its store fails, through HTTP: unavailable storage is a
 * 503 with `Retry-After`, any other failure a 500 without details, both in the API's closed error
 * object (`duplicate_request` and `invalid_card` are the codes it has for them), and neither shows
 * the card number or what the database said.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { AuthenticationStore } from "../../src/delegate-authentication/authentication-store.ts"
import { MemoryAuthenticationStore } from "../doubles/memory-authentication-store.ts"
import { freshMemoryDatabase, type MemoryDatabase } from "../doubles/memory-database.ts"
import { request, testApp } from "../support/http.ts"
import { browserChannel, FRICTIONLESS_CARD } from "../support/three-d-secure.ts"

const VERSION = "2026-04-17"

/** The memory store, except that every write and read fails for `reason`. */
const failingStore = (reason: "unavailable" | "failure"): Layer.Layer<AuthenticationStore, never, MemoryDatabase> =>
  Layer.effect(
    AuthenticationStore,
    Effect.map(Effect.provide(AuthenticationStore, MemoryAuthenticationStore), (memory) => {
      const failure = Effect.fail(new StorageError({ reason, cause: new Error(`db said ${FRICTIONLESS_CARD}?`) }))
      return AuthenticationStore.of({ ...memory, insert: () => failure, get: () => failure })
    })
  )

const run = <A, E>(effect: Effect.Effect<A, E, any>, reason: "unavailable" | "failure") =>
  Effect.provide(
    effect,
    Layer.merge(testApp({ authenticationStore: failingStore(reason) }), freshMemoryDatabase)
  ) as Effect.Effect<A, E, never>

const create = request("POST", "/delegate_authentication", {
  version: VERSION,
  headers: { "idempotency-key": "authn-storage-1" },
  body: {
    merchant_id: "merchant_test",
    payment_method: { type: "card", number: FRICTIONLESS_CARD, exp_month: "12", exp_year: "2030", name: "Ada" },
    amount: { value: 5375, currency: "USD" },
    checkout_session_id: "cs_123",
    channel: browserChannel
  }
})

const read = request("GET", "/delegate_authentication/authn_missing", { version: VERSION })

describe("Delegate Authentication API: storage failures", () => {
  it.effect("storage unavailable → 503 with Retry-After, on create and on read", () =>
    run(
      Effect.gen(function*() {
        for (const response of [yield* create, yield* read]) {
          expect(response.status, response.text).toBe(503)
          expect(response.body).toEqual({
            type: "service_unavailable",
            code: "duplicate_request",
            message: expect.any(String)
          })
          expect(response.headers.get("retry-after")).toBe("5")
          expect(response.text).not.toContain(FRICTIONLESS_CARD)
        }
      }),
      "unavailable"
    ))

  it.effect("storage failure → 500 processing_error without details, on create and on read", () =>
    run(
      Effect.gen(function*() {
        for (const response of [yield* create, yield* read]) {
          expect(response.status, response.text).toBe(500)
          expect(response.body).toEqual({
            type: "processing_error",
            code: "invalid_card",
            message: "An unexpected error occurred."
          })
          expect(response.text).not.toContain(FRICTIONLESS_CARD)
          expect(response.text).not.toContain("db said")
        }
      }),
      "failure"
    ))
})
