/**
 * The database going away and coming back, without a restart: `/readyz` and every storage-bound
 * request answer 503 `service_unavailable` with `Retry-After` (never 500) while it is gone, and
 * 200 again once it returns. The application's pool reaches PostgreSQL through a TCP proxy the
 * test pauses and resumes. Needs TEST_DATABASE_URL.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { makeDatabaseLayer } from "../../src/db/database.ts"
import { createReadySession, get, paymentData, post, testApp, type TestResponse } from "../support/http.ts"
import { tcpProxy } from "../support/tcp-proxy.ts"
import { freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const expectUnavailable = (response: TestResponse) => {
  expect(response.status, response.text).toBe(503)
  expect(response.body).toEqual({
    type: "service_unavailable",
    code: "service_unavailable",
    message: expect.any(String)
  })
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
}

describe.skipIf(!hasPostgres)("storage unreachable (PostgreSQL behind a proxy)", () => {
  it.live(
    "503 service_unavailable with Retry-After while down; recovery without restart",
    () =>
      Effect.gen(function*() {
        const url = new URL(yield* freshPostgresDatabaseUrl)
        const proxy = yield* tcpProxy({ host: url.hostname, port: Number(url.port || "5432") })
        url.host = `127.0.0.1:${proxy.port}`
        const store = SqlCheckoutStore.pipe(
          Layer.provide(makeDatabaseLayer({ kind: "postgres", url: Redacted.make(url.toString()), poolSize: 3 }))
        )
        yield* Effect.gen(function*() {
          expect((yield* get("/readyz", { auth: false, version: false })).status).toBe(200)
          const before = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])

          yield* proxy.pause
          expectUnavailable(yield* get("/readyz", { auth: false, version: false }))
          expectUnavailable(yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] }))
          expectUnavailable(yield* get(`/checkout_sessions/${before.id}`))
          expectUnavailable(yield* post(`/checkout_sessions/${before.id}/complete`, { payment_data: paymentData }))
          // The process itself is alive.
          expect((yield* get("/healthz", { auth: false, version: false })).status).toBe(200)

          yield* proxy.resume
          // The pool replaces its dead connections; a few attempts at most.
          let ready = yield* get("/readyz", { auth: false, version: false })
          for (let attempt = 0; attempt < 20 && ready.status !== 200; attempt++) {
            yield* Effect.sleep("100 millis")
            ready = yield* get("/readyz", { auth: false, version: false })
          }
          expect(ready.status).toBe(200)
          expect(ready.headers.get("retry-after")).toBeNull()
          expect((yield* get(`/checkout_sessions/${before.id}`)).body.status).toBe("ready_for_payment")
          const completed = yield* post(`/checkout_sessions/${before.id}/complete`, { payment_data: paymentData })
          expect(completed.status).toBe(200)
        }).pipe(Effect.provide(testApp({ store })))
      }).pipe(Effect.scoped),
    60_000
  )
})
