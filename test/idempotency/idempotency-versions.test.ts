/**
 * Idempotency per API version through HTTP: the delegate payment route (an ACP API whose rules
 * follow `API-Version`), a test group declaring `VersionedIdempotency` in the checkout error
 * family, and the orders API, which keeps the 2025-09-29 rules whatever `API-Version` says.
 *
 * 2025-09-29 and 2026-01-30: key optional, the same key with another body 409. 2026-04-17: key
 * required (400 `idempotency_key_required`), another body 422, in flight 409 with `Retry-After`,
 * every idempotency error `invalid_request`. A key used under one version is a conflict under
 * another (its stored answer is in the first version's format).
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema, TestClock } from "effect"
import { Api } from "../../src/app/api.ts"
import { VaultStore, type VaultStoreService } from "../../src/delegate-payment/vault-store.ts"
import { DELEGATE_WIRE } from "../../src/delegate-payment/wire/acp/versions.ts"
import { idempotentRoutes } from "../../src/idempotency/http/middleware.ts"
import {
  checkoutIdempotencyError,
  delegateIdempotencyError,
  IDEMPOTENCY_KEY_PARAM
} from "../../src/idempotency/idempotency-errors.ts"
import { IDEMPOTENCY_RULES, type IdempotencyFailure } from "../../src/idempotency/model/rules.ts"
import { API_ID, withSharedErrors } from "../../src/platform/http/feature-api.ts"
import { Idempotent, VersionedIdempotency } from "../../src/platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion, ApiVersionLive, AuthorizationLive } from "../../src/platform/http/security.ts"
import { API_VERSION_NAMES, type ApiVersionName } from "../../src/shared/api-versions.ts"
import { make as makeMemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { DELEGATE_PATH, delegateRequestWith, NoPayments, NOW, validDelegateRequest } from "../support/delegate.ts"
import { API_KEY, post, testApp, type TestAppOptions, type TestResponse } from "../support/http.ts"
import { serveIdempotentApi } from "../support/idempotent-test-api.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW), effect),
    testApp({ payments: NoPayments, ...options })
  ) as Effect.Effect<A, E, never>

const tokenize = (version: ApiVersionName, body: unknown, key?: string) =>
  post(DELEGATE_PATH, body, { version, ...(key !== undefined ? { headers: { "idempotency-key": key } } : {}) })

const isReplay = (response: TestResponse) => response.headers.get("idempotent-replayed") === "true"

const otherBody = () => delegateRequestWith((r) => (r.allowance.max_amount = 1000))

/** Whether `body` is an error object of the delegate API of `version` (its closed enums, nothing else). */
const isDelegateError = (version: ApiVersionName, body: unknown) =>
  Schema.is(DELEGATE_WIRE[version].error, { onExcessProperty: "error" })(body)

describe("delegate payment: the rules of the request's API-Version", () => {
  it.effect("2026-04-17: a POST without Idempotency-Key is 400 idempotency_key_required, and nothing runs", () =>
    run(Effect.gen(function*() {
      const missing = yield* tokenize("2026-04-17", validDelegateRequest())
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual({
        type: "invalid_request",
        code: "idempotency_key_required",
        message: expect.any(String),
        param: IDEMPOTENCY_KEY_PARAM
      })
      expect(isDelegateError("2026-04-17", missing.body)).toBe(true)
      // Nothing was tokenized and nothing kept: the same request with a key runs.
      const keyed = yield* tokenize("2026-04-17", validDelegateRequest(), "k-417")
      expect(keyed.status).toBe(201)
      expect(isReplay(keyed)).toBe(false)
    })))

  it.effect("2025-09-29 and 2026-01-30: the key is optional", () =>
    run(Effect.gen(function*() {
      for (const version of ["2025-09-29", "2026-01-30"] as const) {
        const first = yield* tokenize(version, validDelegateRequest())
        const second = yield* tokenize(version, validDelegateRequest())
        expect([first.status, second.status]).toEqual([201, 201])
        expect(second.body.id).not.toBe(first.body.id)
      }
    })))

  it.effect("the same key with another body: 422 on 2026-04-17, 409 on 2025-09-29 and 2026-01-30", () =>
    run(Effect.gen(function*() {
      const expected: Record<ApiVersionName, number> = { "2025-09-29": 409, "2026-01-30": 409, "2026-04-17": 422 }
      for (const version of API_VERSION_NAMES) {
        const key = `conflict-${version}`
        expect((yield* tokenize(version, validDelegateRequest(), key)).status).toBe(201)
        const conflict = yield* tokenize(version, otherBody(), key)
        expect(conflict.status).toBe(expected[version])
        expect(conflict.body).toEqual({
          type: "invalid_request",
          code: "idempotency_conflict",
          message: expect.any(String)
        })
        expect(isReplay(conflict)).toBe(false)
        expect(conflict.headers.get("retry-after")).toBeNull()
        expect(isDelegateError(version, conflict.body)).toBe(true)
      }
    })))

  it.effect("a replay is the stored answer byte for byte, with Idempotent-Replayed: true", () =>
    run(Effect.gen(function*() {
      for (const version of API_VERSION_NAMES) {
        const key = `replay-${version}`
        const first = yield* tokenize(version, validDelegateRequest(), key)
        expect(first.status).toBe(201)
        expect(isReplay(first)).toBe(false)
        const again = yield* tokenize(version, validDelegateRequest(), key)
        expect(again.status).toBe(201)
        expect(again.text).toBe(first.text)
        expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
        expect(isReplay(again)).toBe(true)
        expect(again.headers.get("idempotency-key")).toBe(key)
        // A stored refusal is replayed the same way.
        const refused = yield* tokenize(
          version,
          delegateRequestWith((r) => (r.payment_method.iin = "555555")),
          `${key}-r`
        )
        const refusedAgain = yield* tokenize(
          version,
          delegateRequestWith((r) => (r.payment_method.iin = "555555")),
          `${key}-r`
        )
        expect([refused.status, refusedAgain.status]).toEqual([422, 422])
        expect(refusedAgain.text).toBe(refused.text)
        expect(isReplay(refusedAgain)).toBe(true)
      }
    })))

  it.effect("the same key and body under another API-Version is a conflict in that version, not a replay", () =>
    run(Effect.gen(function*() {
      const first = yield* tokenize("2025-09-29", validDelegateRequest(), "cross-1")
      expect(first.status).toBe(201)
      const underNewest = yield* tokenize("2026-04-17", validDelegateRequest(), "cross-1")
      expect(underNewest.status).toBe(422)
      expect(underNewest.body.code).toBe("idempotency_conflict")
      const under0130 = yield* tokenize("2026-01-30", validDelegateRequest(), "cross-1")
      expect(under0130.status).toBe(409)
      expect(under0130.body.code).toBe("idempotency_conflict")
      expect([isReplay(underNewest), isReplay(under0130)]).toEqual([false, false])
      // Under its own version it is still the replay.
      const again = yield* tokenize("2025-09-29", validDelegateRequest(), "cross-1")
      expect(isReplay(again)).toBe(true)
      expect(again.text).toBe(first.text)
    })))

  /**
   * A vault store whose token inserts (each with its answer, in one atomic step) wait for `gate`
   * before they begin, announcing each one on `entered`: waiting inside would hold the memory
   * database's one lock, which the twin's claim needs.
   */
  const gatedVault = (entered: Deferred.Deferred<void>, gate: Deferred.Deferred<void>) =>
    Layer.effect(
      VaultStore,
      Effect.map(makeMemoryVaultStore, (base): VaultStoreService => ({
        ...base,
        insertToken: (record, answer) =>
          Deferred.succeed(entered, undefined).pipe(
            Effect.zipRight(Deferred.await(gate)),
            Effect.zipRight(base.insertToken(record, answer))
          )
      }))
    )

  const inFlightCodes: Record<ApiVersionName, string> = {
    "2025-09-29": "idempotency_in_flight",
    "2026-01-30": "duplicate_request",
    "2026-04-17": "idempotency_in_flight"
  }

  for (const version of API_VERSION_NAMES) {
    it.effect(`${version}: a twin of a request still running is 409 ${inFlightCodes[version]} with Retry-After`, () =>
      Effect.gen(function*() {
        const entered = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        yield* run(
          Effect.gen(function*() {
            const running = yield* Effect.fork(tokenize(version, validDelegateRequest(), "twin-1"))
            yield* Deferred.await(entered)
            const twin = yield* tokenize(version, validDelegateRequest(), "twin-1")
            expect(twin.status).toBe(409)
            expect(twin.body).toEqual({
              type: "invalid_request",
              code: inFlightCodes[version],
              message: expect.any(String)
            })
            expect(twin.headers.get("retry-after")).toBe("1")
            expect(isDelegateError(version, twin.body)).toBe(true)
            // Another body while in flight is the conflict of the version.
            const other = yield* tokenize(version, otherBody(), "twin-1")
            expect(other.status).toBe(IDEMPOTENCY_RULES[version].status.conflict)
            expect(other.body.code).toBe("idempotency_conflict")
            yield* Deferred.succeed(gate, undefined)
            const first = yield* Fiber.join(running)
            expect(first.status).toBe(201)
            const replay = yield* tokenize(version, validDelegateRequest(), "twin-1")
            expect(isReplay(replay)).toBe(true)
            expect(replay.body.id).toBe(first.body.id)
          }),
          { vaultStore: gatedVault(entered, gate) }
        )
      }))
  }

  it.effect("a malformed key is 400 invalid_card in every version (the delegate code for refused input)", () =>
    run(Effect.gen(function*() {
      for (const version of API_VERSION_NAMES) {
        const response = yield* tokenize(version, validDelegateRequest(), "has space")
        expect(response.status).toBe(400)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "invalid_card",
          message: expect.any(String),
          param: IDEMPOTENCY_KEY_PARAM
        })
      }
    })))
})

describe("the service's own APIs keep the 2025-09-29 rules whatever API-Version says", () => {
  const refund = (amount: number) => ({ type: "original_payment", amount })
  const postRefund = (body: unknown, key?: string) =>
    post("/orders/ord_missing/refunds", body, {
      version: "2026-04-17",
      ...(key !== undefined ? { headers: { "idempotency-key": key } } : {})
    })

  it.effect("orders on 2026-04-17: no key runs the route; another body is 409 request_not_idempotent", () =>
    run(Effect.gen(function*() {
      expect(idempotentRoutes(Api)("/orders/ord_1/refunds")?.versioned).toBe(false)
      const unkeyed = yield* postRefund(refund(100))
      expect(unkeyed.status).toBe(404)
      const first = yield* postRefund(refund(100), "ord-1")
      expect(first.status).toBe(404)
      const conflict = yield* postRefund(refund(200), "ord-1")
      expect(conflict.status).toBe(409)
      expect(conflict.body).toEqual({
        type: "request_not_idempotent",
        code: "idempotency_conflict",
        message: expect.any(String)
      })
      // The version is not part of the request there: the same body under another one is the replay.
      const replay = yield* post("/orders/ord_missing/refunds", refund(100), {
        version: "2025-09-29",
        headers: { "idempotency-key": "ord-1" }
      })
      expect(isReplay(replay)).toBe(true)
      expect(replay.text).toBe(first.text)
    })))
})

// ---------------------------------------------------------------------------------------------
// The checkout error family with versioned rules, on a group of its own

const Count = Schema.Struct({ count: Schema.Number })

class VersionedCheckout extends HttpApiGroup.make("versionedCheckout")
  .add(HttpApiEndpoint.post("bump", "/versioned/things").addSuccess(Count))
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
  .annotate(VersionedIdempotency, true)
{}

const TestApi = withSharedErrors(HttpApi.make(API_ID).add(VersionedCheckout))

const serve = Effect.gen(function*() {
  let runs = 0
  const ApiLive = HttpApiBuilder.api(TestApi).pipe(
    Layer.provide(
      HttpApiBuilder.group(
        TestApi,
        "versionedCheckout",
        (handlers) => handlers.handle("bump", () => Effect.sync(() => ({ count: ++runs })))
      )
    ),
    Layer.provide([AuthorizationLive, ApiVersionLive])
  )
  const { handler } = yield* serveIdempotentApi(TestApi, ApiLive)
  const send = (version: ApiVersionName, body: unknown, key?: string) =>
    Effect.promise(async () => {
      const response = await handler(
        new Request("http://acp.test/versioned/things", {
          method: "POST",
          body: JSON.stringify(body),
          headers: {
            authorization: `Bearer ${API_KEY}`,
            "api-version": version,
            "content-type": "application/json",
            ...(key !== undefined ? { "idempotency-key": key } : {})
          }
        })
      )
      return { status: response.status, body: JSON.parse(await response.text()) }
    })
  return { send, runs: () => runs }
})

describe("the checkout error family, versioned", () => {
  it.scoped("2026-04-17: key required, 422 conflict, invalid_request everywhere", () =>
    Effect.gen(function*() {
      const { runs, send } = yield* serve
      const missing = yield* send("2026-04-17", { a: 1 })
      expect(missing).toEqual({
        status: 400,
        body: {
          type: "invalid_request",
          code: "idempotency_key_required",
          message: expect.any(String),
          param: IDEMPOTENCY_KEY_PARAM
        }
      })
      expect(runs()).toBe(0)
      expect((yield* send("2026-04-17", { a: 1 }, "c-1")).status).toBe(200)
      const conflict = yield* send("2026-04-17", { a: 2 }, "c-1")
      expect(conflict).toEqual({
        status: 422,
        body: { type: "invalid_request", code: "idempotency_conflict", message: expect.any(String) }
      })
      // Under an older version the same key is that version's conflict, in its error object.
      const older = yield* send("2026-01-30", { a: 1 }, "c-1")
      expect(older).toEqual({
        status: 409,
        body: { type: "request_not_idempotent", code: "idempotency_conflict", message: expect.any(String) }
      })
      expect(runs()).toBe(1)
    }))

  it.scoped("2025-09-29 and 2026-01-30: key optional, 409 request_not_idempotent", () =>
    Effect.gen(function*() {
      const { runs, send } = yield* serve
      for (const version of ["2025-09-29", "2026-01-30"] as const) {
        expect((yield* send(version, { a: 1 })).status).toBe(200)
        expect((yield* send(version, { a: 1 }, `k-${version}`)).status).toBe(200)
        const conflict = yield* send(version, { a: 2 }, `k-${version}`)
        expect(conflict.status).toBe(409)
        expect(conflict.body).toMatchObject({ type: "request_not_idempotent", code: "idempotency_conflict" })
      }
      expect(runs()).toBe(4)
    }))

  it("a group with versioned rules must declare ApiVersion", () => {
    class NoVersion extends HttpApiGroup.make("noVersion")
      .add(HttpApiEndpoint.post("bump", "/x").addSuccess(Count))
      .middleware(AgentAuthorization)
      .annotate(Idempotent, true)
      .annotate(VersionedIdempotency, true)
    {}
    expect(() => idempotentRoutes(HttpApi.make(API_ID).add(NoVersion))).toThrow(
      "noVersion is declared VersionedIdempotency but does not declare ApiVersion"
    )
  })
})

describe("the error objects of every version keep to its enums", () => {
  const failures: ReadonlyArray<IdempotencyFailure> = ["missing_key", "invalid_key", "conflict", "in_flight"]

  it("checkout: no request_not_idempotent from 2026-04-17 on; the in-flight body the completion uses", () => {
    for (const failure of failures) {
      expect(checkoutIdempotencyError("2026-04-17", failure).type).toBe("invalid_request")
    }
    expect(checkoutIdempotencyError("2026-04-17", "in_flight")).toEqual({
      type: "invalid_request",
      code: "idempotency_in_flight",
      message: expect.any(String)
    })
    expect(checkoutIdempotencyError("2026-01-30", "in_flight").type).toBe("request_not_idempotent")
    expect(checkoutIdempotencyError("2025-09-29", "conflict").type).toBe("request_not_idempotent")
  })

  it("delegate: every body is an error object of the version", () => {
    for (const version of API_VERSION_NAMES) {
      for (const failure of failures) {
        if (failure === "missing_key" && !IDEMPOTENCY_RULES[version].keyRequired) continue
        const body = delegateIdempotencyError(version, failure)
        expect(isDelegateError(version, body), `${version} ${failure}: ${JSON.stringify(body)}`).toBe(true)
      }
    }
  })

  it("the table: only 2026-04-17 requires the key and answers a conflict with 422", () => {
    expect(API_VERSION_NAMES.map((v) => [IDEMPOTENCY_RULES[v].keyRequired, IDEMPOTENCY_RULES[v].status.conflict]))
      .toEqual([[false, 409], [false, 409], [true, 422]])
    expect(idempotentRoutes(Api)(DELEGATE_PATH)?.versioned).toBe(true)
  })
})
