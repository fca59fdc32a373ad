/**
 * The Delegate Payment API in each served version, through HTTP: 2025-09-29 as the interface
 * document has it, 2026-01-30 and 2026-04-17 as the official schemas do (empty `risk_signals` and
 * 8-digit `iin` from 2026-04-17 only; string metadata, the `checks_performed` enum, the address
 * limits), and every refusal in the version's error object — a code of its closed enum, 401 and
 * 5xx included. The OpenAPI group of each version declares what the route runs.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema, TestClock } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { delegateGroupFor } from "../../src/delegate-payment/http/api.ts"
import { DelegatePaymentRequest } from "../../src/delegate-payment/model/delegate-payment.ts"
import { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import { DELEGATE_WIRE } from "../../src/delegate-payment/wire/acp/versions.ts"
import { API_ID } from "../../src/platform/http/feature-api.ts"
import { declaredPayload } from "../../src/platform/http/request-body.ts"
import { API_VERSION_NAMES, type ApiVersionName } from "../../src/shared/api-versions.ts"
import { signRequest } from "../../src/shared/request-signing.ts"
import { make as makeMemoryVaultStore } from "../doubles/memory-vault-store.ts"
import {
  CARD_CVC,
  CARD_NUMBER,
  DELEGATE_PATH,
  delegateRequestWith,
  type Json,
  NoPayments,
  NOW,
  validDelegateRequest
} from "../support/delegate.ts"
import { post, type RequestOptions, testApp, type TestAppOptions } from "../support/http.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW), effect),
    testApp({ payments: NoPayments, ...options })
  ) as Effect.Effect<A, E, never>

let keys = 0
/** A delegate request in `version`, with a fresh Idempotency-Key (2026-04-17 requires one). */
const tokenize = (version: ApiVersionName, body: unknown, options: Omit<RequestOptions, "body"> = {}) =>
  post(DELEGATE_PATH, body, {
    version,
    ...options,
    headers: { "idempotency-key": `key-${++keys}`, ...options.headers }
  })

const OFFICIAL = ["2026-01-30", "2026-04-17"] as const

/** Whether `body` is exactly an error object of `version`'s delegate API (closed enums, no other key). */
const isErrorOf = (version: ApiVersionName, body: unknown) =>
  Schema.is(DELEGATE_WIRE[version].error, { onExcessProperty: "error" })(body)

const expectRefused = (
  response: { readonly status: number; readonly body: any; readonly text: string },
  status: number,
  param: string
) => {
  expect(response.status, response.text).toBe(status)
  expect(response.body).toEqual({ type: "invalid_request", code: "invalid_card", message: expect.any(String), param })
  expect(response.text).not.toContain(CARD_NUMBER)
}

describe("what each version accepts", () => {
  it.effect("risk_signals may be empty on 2026-04-17 only", () =>
    run(Effect.gen(function*() {
      const empty = delegateRequestWith((r) => (r.risk_signals = []))
      expect((yield* tokenize("2026-04-17", empty)).status).toBe(201)
      for (const version of ["2025-09-29", "2026-01-30"] as const) {
        expectRefused(yield* tokenize(version, empty), 400, "$.risk_signals")
      }
    })))

  it.effect("an 8-digit iin on 2026-04-17 only; 6 digits everywhere; 9 nowhere", () =>
    run(Effect.gen(function*() {
      const eight = delegateRequestWith((r) => (r.payment_method.iin = "42424242"))
      const accepted = yield* tokenize("2026-04-17", eight)
      expect(accepted.status).toBe(201)
      for (const version of ["2025-09-29", "2026-01-30"] as const) {
        const refused = yield* tokenize(version, eight)
        expectRefused(refused, 400, "$.payment_method.iin")
        expect(refused.body.message).toContain("first 6 digits")
      }
      for (const version of API_VERSION_NAMES) {
        expect((yield* tokenize(version, validDelegateRequest())).status).toBe(201)
      }
      expectRefused(
        yield* tokenize("2026-04-17", delegateRequestWith((r) => (r.payment_method.iin = "424242424"))),
        400,
        "$.payment_method.iin"
      )
      // Still the start of the number.
      const notPrefix = yield* tokenize("2026-04-17", delegateRequestWith((r) => (r.payment_method.iin = "42424243")))
      expectRefused(notPrefix, 422, "$.payment_method.iin")
      expect(notPrefix.body.message).toContain("first 8 digits")
    })))

  const officialOnly: ReadonlyArray<readonly [string, string, (r: Json) => void]> = [
    ["checks_performed outside avs|cvv|ani|auth0", "$.payment_method.checks_performed[1]", (r) => {
      r.payment_method.checks_performed = ["avs", "3ds"]
    }],
    ["payment_method.metadata with a value that is not a string", "$.payment_method.metadata.bank", (r) => {
      r.payment_method.metadata = { bank: true }
    }],
    ["eci_value of 3 characters", "$.payment_method.eci_value", (r) => (r.payment_method.eci_value = "105")],
    ["billing_address.line_one of 61 characters", "$.billing_address.line_one", (r) => {
      r.billing_address.line_one = "x".repeat(61)
    }],
    ["billing_address.postal_code of 21 characters", "$.billing_address.postal_code", (r) => {
      r.billing_address.postal_code = "1".repeat(21)
    }]
  ]

  for (const [name, param, mutate] of officialOnly) {
    it.effect(`${name}: refused by the official versions, accepted by 2025-09-29`, () =>
      run(Effect.gen(function*() {
        const body = delegateRequestWith(mutate)
        expect((yield* tokenize("2025-09-29", body)).status).toBe(201)
        for (const version of OFFICIAL) {
          const refused = yield* tokenize(version, body)
          expectRefused(refused, 400, param)
          expect(isErrorOf(version, refused.body)).toBe(true)
        }
      })))
  }

  it.effect("the official request example of 2026-04-17 is accepted (string metadata, virtual, empty card metadata)", () =>
    run(Effect.gen(function*() {
      const body = delegateRequestWith((r) => {
        r.payment_method.metadata = {}
        r.payment_method.virtual = false
        r.payment_method.display_wallet_type = "apple_pay"
        r.metadata = { session_id: "sess_abc123", user_agent: "ChatGPT/2.0" }
      })
      for (const version of API_VERSION_NAMES) expect((yield* tokenize(version, body)).status).toBe(201)
    })))
})

// ---------------------------------------------------------------------------------------------
// Refusals in each version's error object

/** The code each version answers a refusal with (2025-09-29: today's; official: its enum). */
const codeOf = (version: ApiVersionName, legacy: string, official: string) =>
  version === "2025-09-29" ? legacy : official

describe("401 in the version's error object", () => {
  it.effect("no or an unknown API key", () =>
    run(Effect.gen(function*() {
      for (const version of API_VERSION_NAMES) {
        for (const auth of [false, "sk_wrong"] as const) {
          const response = yield* tokenize(version, validDelegateRequest(), { auth })
          expect(response.status).toBe(401)
          expect(response.body).toEqual({
            type: "invalid_request",
            code: codeOf(version, "unauthorized", "invalid_card"),
            message: expect.stringContaining("API key"),
            ...(version === "2025-09-29" ? {} : { param: "$.headers['Authorization']" })
          })
          if (version !== "2025-09-29") expect(isErrorOf(version, response.body)).toBe(true)
        }
      }
      // A version this route does not speak: the interface document's object.
      const unknown = yield* tokenize("2020-01-01" as ApiVersionName, validDelegateRequest(), { auth: false })
      expect(unknown.body.code).toBe("unauthorized")
    })))

  const secret = "sig_secret"
  it.effect("a request signature refused", () =>
    run(
      Effect.gen(function*() {
        for (const version of API_VERSION_NAMES) {
          const unsigned = yield* tokenize(version, validDelegateRequest())
          expect(unsigned.status).toBe(401)
          expect(unsigned.body).toEqual({
            type: "invalid_request",
            code: codeOf(version, "invalid_signature", "invalid_card"),
            message: expect.stringContaining("signature"),
            ...(version === "2025-09-29" ? {} : { param: "$.headers['Signature']" })
          })
          const body = JSON.stringify(validDelegateRequest())
          const timestamp = String(Math.floor(NOW / 1000))
          const signed = yield* tokenize(version, body, {
            headers: { timestamp, signature: signRequest(secret, timestamp, body) }
          })
          expect(signed.status).toBe(201)
        }
      }),
      { config: { requestSigningSecrets: [Redacted.make(secret)] } }
    ))
})

describe("every refusal of the official versions is a code of their enum", () => {
  const failingVault = (reason: "unavailable" | "failure") =>
    Layer.effect(
      VaultStore,
      Effect.map(makeMemoryVaultStore, (base) => ({
        ...base,
        insertToken: () => Effect.fail(new StorageError({ reason, cause: new Error(`db said ${CARD_NUMBER}`) }))
      }))
    )

  for (const version of API_VERSION_NAMES) {
    it.effect(`${version}: body, content type, size and rules`, () =>
      run(Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [number, string, unknown, Omit<RequestOptions, "body">]> = [
          [400, codeOf(version, "invalid_card", "invalid_card"), delegateRequestWith((r) => delete r.allowance), {}],
          [400, codeOf(version, "invalid_json", "invalid_card"), `{"payment_method":{"cvc":"${CARD_CVC}"`, {}],
          [400, codeOf(version, "invalid_content_type", "invalid_card"), "x", { contentType: "text/plain" }],
          [400, codeOf(version, "invalid_content_type", "invalid_card"), validDelegateRequest(), {
            contentType: "application/json; charset=utf-16"
          }],
          [400, codeOf(version, "invalid_content_type", "invalid_card"), validDelegateRequest(), {
            headers: { "content-encoding": "gzip" }
          }],
          [413, codeOf(version, "request_too_large", "invalid_card"), `"${"x".repeat(1024 * 1024)}"`, {}],
          [422, "invalid_card", delegateRequestWith((r) => (r.payment_method.exp_year = "2020")), {}]
        ]
        for (const [status, code, body, options] of cases) {
          const response = yield* tokenize(version, body, options)
          expect(response.status, response.text).toBe(status)
          expect(response.body.type).toBe("invalid_request")
          expect(response.body.code).toBe(code)
          expect(response.text).not.toContain(CARD_NUMBER)
          if (version !== "2025-09-29") expect(isErrorOf(version, response.body), response.text).toBe(true)
          // A refused content coding names its header in every version.
          if (options.headers !== undefined) expect(response.body.param).toBe("$.headers['Content-Encoding']")
        }
      })))

    it.effect(`${version}: 429`, () =>
      run(
        Effect.gen(function*() {
          expect((yield* tokenize(version, validDelegateRequest())).status).toBe(201)
          const limited = yield* tokenize(version, validDelegateRequest())
          expect(limited.status).toBe(429)
          expect(limited.body).toEqual({
            type: "rate_limit_exceeded",
            code: "too_many_requests",
            message: expect.any(String)
          })
          expect(isErrorOf(version, limited.body)).toBe(true)
        }),
        { config: { delegateRateLimitPerMinute: 1 } }
      ))

    for (
      const [reason, status, type] of [["failure", 500, "processing_error"], [
        "unavailable",
        503,
        "service_unavailable"
      ]] as const
    ) {
      it.effect(`${version}: ${status}`, () =>
        run(
          Effect.gen(function*() {
            const response = yield* tokenize(version, validDelegateRequest())
            expect(response.status).toBe(status)
            expect(response.body).toEqual({
              type,
              code: codeOf(version, type, "too_many_requests"),
              message: expect.any(String)
            })
            expect(response.text).not.toContain(CARD_NUMBER)
            if (version !== "2025-09-29") expect(isErrorOf(version, response.body)).toBe(true)
          }),
          { vaultStore: failingVault(reason) }
        ))
    }
  }
})

describe("one OpenAPI group per version", () => {
  it("declares the request its route decodes that version with", () => {
    for (const version of API_VERSION_NAMES) {
      expect(declaredPayload(delegateGroupFor(version), "tokenize")).toBe(DELEGATE_WIRE[version].request)
    }
    expect(DELEGATE_WIRE["2025-09-29"].request).toBe(DelegatePaymentRequest)
  })

  it("documents the version's headers, error codes and limits", () => {
    const spec = (version: ApiVersionName) => {
      const document = OpenApi.fromApi(HttpApi.make(API_ID).add(delegateGroupFor(version))) as any
      return { document, operation: document.paths[DELEGATE_PATH].post }
    }
    const codes = (document: any, status: number) =>
      document.components.schemas[`DelegateError${status}`].properties.code.enum
    const keyRequired = (operation: any) => operation.parameters.find((p: any) => p.name === "idempotency-key").required
    const newest = spec("2026-04-17")
    expect(keyRequired(newest.operation)).toBe(true)
    expect(codes(newest.document, 401)).toEqual(["invalid_card"])
    expect(codes(newest.document, 409)).toEqual(["idempotency_in_flight"])
    expect(codes(newest.document, 422)).toEqual(["invalid_card", "idempotency_conflict"])
    expect(codes(newest.document, 400)).toEqual(["invalid_card", "idempotency_key_required"])
    expect(newest.document.components.schemas.PaymentMethodCard.properties.iin.pattern).toBe("^[0-9]{6,8}$")
    const january = spec("2026-01-30")
    expect(keyRequired(january.operation)).toBe(false)
    expect(codes(january.document, 409)).toEqual(["idempotency_conflict", "duplicate_request"])
    expect(january.document.components.schemas.DelegatePaymentRequest.properties.risk_signals.minItems).toBe(1)
    const legacy = spec("2025-09-29")
    expect(codes(legacy.document, 401)).toEqual(["unauthorized", "invalid_signature"])
    for (const version of OFFICIAL) {
      const { document } = spec(version)
      for (const status of [400, 401, 409, 413, 422, 429, 500, 503]) {
        for (const code of codes(document, status)) expect(DELEGATE_WIRE[version].codes).toContain(code)
      }
    }
  })
})
