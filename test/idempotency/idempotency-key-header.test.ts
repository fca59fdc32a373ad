/**
 * The Idempotency-Key header: 1-255 printable ASCII characters, echoed on the answers (401s, errors
 * the route answers, GETs), never stored for an unauthenticated request; the routes it covers (not
 * the webhook receiver) and the delegate route family's own error object.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Api } from "../../src/app/api.ts"
import { idempotentRoutes } from "../../src/idempotency/http/middleware.ts"
import { delegateIdempotencyError } from "../../src/idempotency/idempotency-errors.ts"
import { buyer, get, post } from "../support/http.ts"
import { createBody, isReplay, run, withKey } from "./idempotency-api-fixtures.ts"

describe("the Idempotency-Key header", () => {
  it.effect("must be 1-255 printable ASCII characters", () =>
    run(Effect.gen(function*() {
      for (const bad of ["x".repeat(256), "has space", ""]) {
        const response = yield* post("/checkout_sessions", createBody, withKey(bad))
        expect(response.status).toBe(400)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "invalid",
          message: expect.any(String),
          param: "$.headers['Idempotency-Key']"
        })
        expect(response.headers.has("idempotency-key")).toBe(false)
      }
      const longest = yield* post("/checkout_sessions", createBody, withKey("k".repeat(255)))
      expect(longest.status).toBe(201)
      expect(longest.headers.get("idempotency-key")).toBe("k".repeat(255))
    })))

  it.effect("unauthenticated requests get 401 (with the key echoed) and are never stored", () =>
    run(Effect.gen(function*() {
      const bad = yield* post("/checkout_sessions", createBody, withKey("x".repeat(300), { auth: "sk_wrong" }))
      expect(bad.status).toBe(401)
      const first = yield* post("/checkout_sessions", createBody, withKey("auth-1", { auth: "sk_wrong" }))
      expect(first.status).toBe(401)
      expect(first.headers.get("idempotency-key")).toBe("auth-1")
      const second = yield* post("/checkout_sessions", createBody, withKey("auth-1", { auth: false }))
      expect(second.status).toBe(401)
      expect(isReplay(second)).toBe(false)
      const authenticated = yield* post("/checkout_sessions", createBody, withKey("auth-1"))
      expect(authenticated.status).toBe(201)
      expect(isReplay(authenticated)).toBe(false)
    })))

  it.effect("is echoed on errors the route answers, and on GETs", () =>
    run(Effect.gen(function*() {
      const missing = yield* post("/checkout_sessions/cs_missing", { buyer }, withKey("echo-1"))
      expect(missing.status).toBe(404)
      expect(missing.headers.get("idempotency-key")).toBe("echo-1")
      const read = yield* get("/checkout_sessions/cs_missing", withKey("echo-2"))
      expect(read.headers.get("idempotency-key")).toBe("echo-2")
    })))

  it.effect("a path no route takes (an id over 100 characters) is not claimed: nothing kept, no conflict", () =>
    run(Effect.gen(function*() {
      // The router's limit: a longer id is no route, and a key scoped to its path would grow
      // without bound (an index row PostgreSQL refuses).
      for (const id of ["a".repeat(101), "%C3%A9".repeat(101), "b".repeat(5000)]) {
        const first = yield* post(`/checkout_sessions/${id}`, { buyer }, withKey("long-1"))
        expect(first.status).toBe(404)
        expect(first.body.message).toMatch(/^No route POST /)
        const other = yield* post(
          `/checkout_sessions/${id}`,
          { buyer: { ...buyer, first_name: "B" } },
          withKey("long-1")
        )
        expect(other.status).toBe(404)
        expect(isReplay(other)).toBe(false)
      }
      // At the limit the route answers, and its answer is kept and replayed.
      const longest = "c".repeat(100)
      const first = yield* post(`/checkout_sessions/${longest}`, { buyer }, withKey("long-2"))
      expect(first.body.message).toBe(`No checkout session ${longest}.`)
      const again = yield* post(`/checkout_sessions/${longest}`, { buyer }, withKey("long-2"))
      expect(isReplay(again)).toBe(true)
      const escaped = yield* post(`/checkout_sessions/${"%C3%A9".repeat(100)}`, { buyer }, withKey("long-3"))
      expect(escaped.body.message).toBe(`No checkout session ${"é".repeat(100)}.`)
    })))

  it.effect("the webhook receiver is not covered: nothing is replayed there", () =>
    run(Effect.gen(function*() {
      const path = "/agentic_checkout/webhooks/order_events"
      const first = yield* post(path, { type: "order_create" }, withKey("hook-1"))
      const second = yield* post(path, { type: "order_create" }, withKey("hook-1"))
      expect(isReplay(first)).toBe(false)
      expect(isReplay(second)).toBe(false)
      const routeOf = idempotentRoutes(Api)
      expect(routeOf(path)).toBeUndefined()
      expect(routeOf("/agentic_commerce/delegate_payment")).toBeDefined()
      expect(routeOf("/orders/ord_1/refunds")).toBeDefined()
    })))

  it("the delegate route family gets its own error object", () => {
    const routeOf = idempotentRoutes(Api)
    expect(routeOf("/agentic_commerce/delegate_payment")?.family).toBe("delegate")
    expect(routeOf("/checkout_sessions")?.family).toBe("checkout")
    expect(delegateIdempotencyError("2025-09-29", "conflict")).toMatchObject({
      type: "invalid_request",
      code: "idempotency_conflict"
    })
    expect(delegateIdempotencyError("2025-09-29", "in_flight")).toMatchObject({
      type: "invalid_request",
      code: "idempotency_in_flight"
    })
    expect(delegateIdempotencyError("2025-09-29", "invalid_key")).toMatchObject({
      type: "invalid_request",
      code: "invalid_card",
      param: "$.headers['Idempotency-Key']"
    })
  })
})
