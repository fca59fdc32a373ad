/**
 * The Checkout Session API's rules common to every route, through its public surface (in-process
 * HTTP), on every store (see `./checkout-api-fixtures.ts`): authentication, text storage cannot
 * keep, the API-Version check, Request-Id and Content-Language, unknown routes and methods, and
 * the health, readiness, discovery and OpenAPI routes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { address, buyer, get, paymentData, post, request } from "../support/http.ts"
import { describeCheckoutApiOnEveryStore } from "./checkout-api-fixtures.ts"

describeCheckoutApiOnEveryStore((run) => {
  describe("common rules", () => {
    it.effect("401 without or with a wrong bearer key, in the error envelope", () =>
      run(Effect.gen(function*() {
        for (const auth of [false, "sk_wrong", ""] as const) {
          const response = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] }, { auth })
          expect(response.status).toBe(401)
          expect(response.body).toEqual({
            type: "invalid_request",
            code: "unauthorized",
            message: expect.any(String)
          })
        }
        const basic = yield* request("GET", "/checkout_sessions/cs_x", {
          auth: false,
          headers: { authorization: "Basic c2tfdGVzdF9rZXk6" }
        })
        expect(basic.status).toBe(401)
      })))

    it.effect("text storage cannot keep (NUL, unpaired surrogates) is 400 invalid at its JSONPath, on every route", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          buyer: { ...buyer, first_name: "Ada 😀" }
        })
        expect(created.status).toBe(201)
        const id = created.body.id as string
        const cases: Array<[string, unknown, string]> = [
          ["/checkout_sessions", {
            items: [{ id: "mug-ceramic", quantity: 1 }],
            buyer: { ...buyer, last_name: "L\u0000" }
          }, "$.buyer.last_name"],
          [
            `/checkout_sessions/${id}`,
            { fulfillment_address: { ...address, line_one: "1 Main \ud83d St" } },
            "$.fulfillment_address.line_one"
          ],
          [`/checkout_sessions/${id}/complete`, {
            payment_data: paymentData,
            buyer: { ...buyer, email: "a\u0000@b.co" }
          }, "$.buyer.email"]
        ]
        for (const [path, body, param] of cases) {
          const response = yield* post(path, body)
          expect(response.status, path).toBe(400)
          expect(response.body).toEqual({
            type: "invalid_request",
            code: "invalid",
            message: expect.any(String),
            param
          })
        }
        const unchanged = yield* get(`/checkout_sessions/${id}`)
        expect(unchanged.body.status).not.toBe("completed")
        expect(unchanged.body.buyer.first_name).toBe("Ada 😀")
        // In the path too, where no body check sees it.
        for (
          const [method, path] of [["GET", "/checkout_sessions/cs_%00"], ["POST", "/checkout_sessions/cs_%00/cancel"]]
        ) {
          const response = yield* request(method!, path!)
          expect(response.status, path).toBe(400)
          expect(response.body).toMatchObject({ code: "invalid", param: "$.checkout_session_id" })
        }
      })))

    it.effect("a number beyond a double (1e400, kept as null) is 400 invalid at its JSONPath", () =>
      run(Effect.gen(function*() {
        const body = (metadata: string) =>
          `{"line_items":[{"id":"mug-ceramic"}],"currency":"usd","capabilities":{},"metadata":${metadata}}`
        const refused = yield* request("POST", "/checkout_sessions", {
          body: body(`{"n":1e400,"m":-1e999}`),
          version: "2026-01-30"
        })
        expect(refused.status).toBe(400)
        expect(refused.body).toMatchObject({ code: "invalid", param: "$.metadata.n" })
        const kept = yield* request("POST", "/checkout_sessions", {
          body: body(`{"n":1.7e308}`),
          version: "2026-01-30"
        })
        expect(kept.status, kept.text).toBe(201)
      })))

    it.effect("authentication comes before the API-Version check", () =>
      run(Effect.gen(function*() {
        const response = yield* get("/checkout_sessions/cs_x", { auth: false, version: false })
        expect(response.status).toBe(401)
      })))

    it.effect("API-Version missing, malformed or unsupported → 400 with supported_versions, newest first", () =>
      run(Effect.gen(function*() {
        const missing = yield* get("/checkout_sessions/cs_x", { version: false })
        expect(missing.status).toBe(400)
        expect(missing.body.code).toBe("missing_api_version")
        expect(missing.body.supported_versions).toEqual([
          "2026-04-17",
          "2026-01-30",
          "2025-09-29"
        ])
        // 2025-12-12 and 2026-01-16 are not served: never accepted and answered in another format.
        for (const version of ["2026-13-01", "yesterday", "2024-01-01", "2025-12-12", "2026-01-16"]) {
          const bad = yield* get("/checkout_sessions/cs_x", { version })
          expect(bad.status).toBe(400)
          expect(bad.body.code).toBe("unsupported_api_version")
          expect(bad.body.supported_versions[0]).toBe("2026-04-17")
        }
        const old = yield* get("/checkout_sessions/cs_x", { version: "2025-09-29" })
        expect(old.status).toBe(404)
      })))

    it.effect("Request-Id is echoed, or generated; Content-Language is en", () =>
      run(Effect.gen(function*() {
        const echoed = yield* get("/checkout_sessions/cs_x", { headers: { "request-id": "req-abc-123" } })
        expect(echoed.headers.get("request-id")).toBe("req-abc-123")
        expect(echoed.headers.get("content-language")).toBe("en")
        const generated = yield* get("/checkout_sessions/cs_x")
        expect(generated.headers.get("request-id")).toMatch(/^req_/)
        const unauthorized = yield* get("/checkout_sessions/cs_x", { auth: false, headers: { "request-id": "r1" } })
        expect(unauthorized.headers.get("request-id")).toBe("r1")
      })))

    it.effect("unknown routes → 404, known paths with another method → 405 with Allow", () =>
      run(Effect.gen(function*() {
        const missing = yield* get("/nope")
        expect(missing.status).toBe(404)
        expect(missing.body).toMatchObject({ type: "invalid_request", code: "not_found" })
        const method = yield* request("DELETE", "/checkout_sessions/cs_123")
        expect(method.status).toBe(405)
        expect(method.body.code).toBe("method_not_allowed")
        expect(method.headers.get("allow")).toContain("GET")
        expect(method.headers.get("allow")).toContain("POST")
      })))

    it.effect("health, readiness, discovery and OpenAPI", () =>
      run(Effect.gen(function*() {
        expect((yield* get("/healthz", { auth: false, version: false })).body).toEqual({ status: "ok" })
        expect((yield* get("/readyz", { auth: false, version: false })).body).toEqual({
          status: "ready",
          storage: "ok"
        })
        const discovery = yield* get("/.well-known/acp.json", { auth: false, version: false })
        expect(discovery.body.protocol.version).toBe("2026-04-17")
        const openapi = yield* get("/openapi.json", { auth: false, version: false })
        expect(openapi.status).toBe(200)
        expect(Object.keys(openapi.body.paths)).toContain("/checkout_sessions/{checkout_session_id}/complete")
        const complete = openapi.body.paths["/checkout_sessions/{checkout_session_id}/complete"].post
        expect(Object.keys(complete.responses).sort()).toEqual([
          "200",
          "400",
          "401",
          "402",
          "403",
          "404",
          "409",
          "413",
          "422",
          "500",
          "503"
        ])
        // The headers middleware sets are documented too.
        const headersOf = (operation: any, status: string) =>
          Object.keys(operation.responses[status].headers ?? {}).sort()
        expect(headersOf(complete, "200")).toEqual(["Idempotency-Key", "Idempotent-Replayed", "Request-Id"])
        expect(headersOf(complete, "409")).toEqual([
          "Idempotency-Key",
          "Idempotent-Replayed",
          "Request-Id",
          "Retry-After"
        ])
        expect(headersOf(complete, "503")).toEqual(["Idempotency-Key", "Request-Id", "Retry-After"])
        const receiver = openapi.body.paths["/agentic_checkout/webhooks/order_events"].post
        expect(headersOf(receiver, "200")).toEqual(["Request-Id"])
        expect(headersOf(receiver, "429")).toEqual(["Request-Id", "Retry-After"])
        // 401 where a route authenticates (bearer, or the receiver's signature), not on open routes.
        expect(Object.keys(receiver.responses)).toContain("401")
        for (const open of ["/healthz", "/readyz", "/.well-known/acp.json"]) {
          expect(Object.keys(openapi.body.paths[open].get.responses)).not.toContain("401")
        }
        for (const [path, methods] of Object.entries(openapi.body.paths as Record<string, Record<string, any>>)) {
          if (
            path.startsWith("/checkout_sessions") || path.startsWith("/orders") || path.startsWith("/agentic_commerce")
          ) {
            for (const operation of Object.values(methods)) expect(Object.keys(operation.responses)).toContain("401")
          }
        }
        const docs = yield* get("/docs", { auth: false, version: false })
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toContain("text/html")
      })))
  })
})
