/**
 * The Checkout Session API through its public surface (in-process HTTP), on every store: memory,
 * SQL over embedded PGlite, and SQL over PostgreSQL when TEST_DATABASE_URL is set. Each test gets
 * fresh state (see `test/support/store-under-test.ts`) and runs on TestClock: SQL I/O is real
 * (promises are not virtualized), while every `now` the service uses, including the expiry
 * comparisons made in SQL, comes from the Clock as a parameter.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { PaymentDeclined, PaymentProvider } from "../../src/payments/payment-provider.ts"
import { MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts"
import {
  address,
  buyer,
  createReadySession,
  get,
  paymentData,
  post,
  request,
  testApp,
  type TestAppOptions
} from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

const ttlMillis = 21600 * 1000

/** Registers every case of this file against one store. */
const checkoutApiSuite = (store: StoreUnderTest) => {
  /** Runs `effect` against a fresh application over a fresh `store`. */
  const run = <A, E>(effect: Effect.Effect<A, E, any>, options: Omit<TestAppOptions, "store"> = {}) =>
    Effect.flatMap(
      store.fresh,
      (storeLayer) => Effect.provide(effect, testApp({ ...options, store: storeLayer }))
    ) as Effect.Effect<A, E, never>

  describe("POST /checkout_sessions (create)", () => {
    it.effect("creates a session with priced line items, options and totals (201)", () =>
      run(Effect.gen(function*() {
        const response = yield* post("/checkout_sessions", {
          items: [{ id: "tshirt-classic", quantity: 2 }],
          buyer,
          fulfillment_address: address
        })
        expect(response.status).toBe(201)
        const session = response.body
        expect(session.id).toMatch(/^cs_/)
        expect(session.status).toBe("ready_for_payment")
        expect(session.currency).toBe("usd")
        expect(session.line_items).toHaveLength(1)
        expect(session.line_items[0]).toMatchObject({
          item: { id: "tshirt-classic", quantity: 2 },
          base_amount: 5000,
          discount: 0,
          subtotal: 5000,
          tax: 444, // NY 8.875 %, half up
          total: 5444
        })
        expect(session.line_items[0].id).toMatch(/^li_/)
        expect(session.fulfillment_options.map((o: { id: string }) => o.id)).toEqual(["standard", "express"])
        expect(session.fulfillment_option_id).toBe("standard")
        expect(session.totals).toEqual([
          { type: "items_base_amount", display_text: "Items", amount: 5000 },
          { type: "subtotal", display_text: "Subtotal", amount: 5000 },
          { type: "fulfillment", display_text: "Shipping", amount: 500 },
          { type: "tax", display_text: "Tax", amount: 444 + 44 },
          { type: "total", display_text: "Total", amount: 5000 + 500 + 488 }
        ])
        expect(session.links.map((l: { type: string }) => l.type)).toEqual(["terms_of_use", "privacy_policy"])
        expect(session.capabilities.payment.handlers[0].id).toBe("card_tokenized")
        expect(session.messages).toEqual([])
        expect(session).not.toHaveProperty("items")
      })))

    it.effect("a session without buyer and address is not ready, with a message per gap", () =>
      run(Effect.gen(function*() {
        const response = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] })
        expect(response.status).toBe(201)
        expect(response.body.status).toBe("not_ready_for_payment")
        const params = response.body.messages.map((m: { param: string }) => m.param)
        expect(params).toContain("$.fulfillment_address")
        expect(params).toContain("$.buyer")
        expect(
          response.body.messages.every((m: { type: string; code: string }) =>
            m.type === "error" && m.code === "missing"
          )
        )
          .toBe(true)
      })))

    it.effect("digital-only carts get the single digital option", () =>
      run(Effect.gen(function*() {
        const response = yield* post("/checkout_sessions", { items: [{ id: "ebook-field-guide", quantity: 1 }], buyer })
        expect(response.status).toBe(201)
        expect(response.body.fulfillment_options).toEqual([
          {
            type: "digital",
            id: "digital",
            title: "Digital delivery",
            subtitle: "Delivered by email",
            subtotal: 0,
            tax: 0,
            total: 0
          }
        ])
        expect(response.body.status).toBe("ready_for_payment")
      })))

    const badBodies: ReadonlyArray<[string, unknown, string, "missing" | "invalid"]> = [
      ["items missing", {}, "$.items", "missing"],
      ["items empty", { items: [] }, "$.items", "invalid"],
      ["items not an array", { items: "tshirt" }, "$.items", "invalid"],
      ["quantity zero", { items: [{ id: "tshirt-classic", quantity: 0 }] }, "$.items[0].quantity", "invalid"],
      ["quantity negative", { items: [{ id: "tshirt-classic", quantity: -3 }] }, "$.items[0].quantity", "invalid"],
      ["quantity fractional", { items: [{ id: "tshirt-classic", quantity: 1.5 }] }, "$.items[0].quantity", "invalid"],
      ["quantity a string", { items: [{ id: "tshirt-classic", quantity: "2" }] }, "$.items[0].quantity", "invalid"],
      ["quantity huge", { items: [{ id: "tshirt-classic", quantity: 1e300 }] }, "$.items[0].quantity", "invalid"],
      ["quantity missing", { items: [{ id: "tshirt-classic" }] }, "$.items[0].quantity", "missing"],
      ["id missing", { items: [{ quantity: 1 }] }, "$.items[0].id", "missing"],
      ["id empty", { items: [{ id: "", quantity: 1 }] }, "$.items[0].id", "invalid"],
      ["id a number", { items: [{ id: 7, quantity: 1 }] }, "$.items[0].id", "invalid"],
      [
        "second item bad",
        { items: [{ id: "mug-ceramic", quantity: 1 }, { id: "mug-ceramic", quantity: null }] },
        "$.items[1].quantity",
        "invalid"
      ],
      [
        "buyer email bad",
        { items: [{ id: "mug-ceramic", quantity: 1 }], buyer: { ...buyer, email: "nope" } },
        "$.buyer.email",
        "invalid"
      ],
      [
        "buyer first name missing",
        { items: [{ id: "mug-ceramic", quantity: 1 }], buyer: { last_name: "L", email: "a@b.co" } },
        "$.buyer.first_name",
        "missing"
      ],
      [
        "address city missing",
        { items: [{ id: "mug-ceramic", quantity: 1 }], fulfillment_address: { ...address, city: undefined } },
        "$.fulfillment_address.city",
        "missing"
      ],
      [
        "address country bad",
        { items: [{ id: "mug-ceramic", quantity: 1 }], fulfillment_address: { ...address, country: "USA" } },
        "$.fulfillment_address.country",
        "invalid"
      ],
      [
        "address a string",
        { items: [{ id: "mug-ceramic", quantity: 1 }], fulfillment_address: "1 Main St" },
        "$.fulfillment_address",
        "invalid"
      ],
      ["body an array", [{ id: "mug-ceramic", quantity: 1 }], "$", "invalid"],
      ["body null", null, "$", "invalid"],
      ["body a number", 42, "$", "invalid"]
    ]
    for (const [name, body, param, code] of badBodies) {
      it.effect(`400 ${code} ${param}: ${name}`, () =>
        run(Effect.gen(function*() {
          const response = yield* post("/checkout_sessions", body === null ? "null" : body)
          expect(response.status).toBe(400)
          expect(response.body).toMatchObject({ type: "invalid_request", code, param })
          expect(response.body.message).toContain(param)
        })))
    }

    it.effect("a fractional quantity is described in words", () =>
      run(Effect.gen(function*() {
        const response = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1.5 }] })
        expect(response.body.message).toBe("$.items[0].quantity must be an integer")
      })))

    it.effect("unknown product → 400 invalid at $.items[i].id", () =>
      run(Effect.gen(function*() {
        const response = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }, { id: "unicorn", quantity: 1 }]
        })
        expect(response.status).toBe(400)
        expect(response.body).toMatchObject({ code: "invalid", param: "$.items[1].id" })
      })))

    it.effect("odd input never yields a 500: __proto__ keys, deep nesting, unknown fields", () =>
      run(Effect.gen(function*() {
        const proto = yield* post(
          "/checkout_sessions",
          "{\"items\":[{\"id\":\"mug-ceramic\",\"quantity\":1,\"__proto__\":{\"admin\":true}}],\"__proto__\":{\"polluted\":1},\"constructor\":{\"prototype\":{\"x\":1}}}"
        )
        expect(proto.status).toBe(201)
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
        expect(({} as Record<string, unknown>)["admin"]).toBeUndefined()
        // Nesting beyond MAX_JSON_DEPTH is refused wherever it is, an unknown field included.
        const deep = "[".repeat(50_000) + "]".repeat(50_000)
        const nested = yield* post(
          "/checkout_sessions",
          `{"items":[{"id":"mug-ceramic","quantity":1}],"extra":${deep}}`
        )
        expect(nested.status).toBe(400)
        expect(nested.body).toMatchObject({ code: "invalid_json", param: "$.extra" + "[0]".repeat(MAX_JSON_DEPTH - 1) })
        const deepItems = yield* post("/checkout_sessions", `{"items":${deep}}`)
        expect(deepItems.status).toBe(400)
        expect(deepItems.body).toMatchObject({
          code: "invalid_json",
          param: "$.items" + "[0]".repeat(MAX_JSON_DEPTH - 1)
        })
        const extra = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1, color: "red" }],
          future_field: { a: 1 }
        })
        expect(extra.status).toBe(201)
      })))

    it.effect("wrong content type, malformed JSON, empty body, oversized body", () =>
      run(Effect.gen(function*() {
        const text = yield* post("/checkout_sessions", "{\"items\":[]}", { contentType: "text/plain" })
        expect(text.status).toBe(400)
        expect(text.body.code).toBe("invalid_content_type")
        const none = yield* post("/checkout_sessions", "{\"items\":[]}", { contentType: false })
        expect(none.body.code).toBe("invalid_content_type")
        const malformed = yield* post("/checkout_sessions", "{\"items\": [")
        expect(malformed.status).toBe(400)
        expect(malformed.body).toMatchObject({ type: "invalid_request", code: "invalid_json" })
        const empty = yield* post("/checkout_sessions", "")
        expect(empty.status).toBe(400)
        expect(empty.body.code).toBe("invalid_json")
        const big = yield* post(
          "/checkout_sessions",
          JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 1 }], pad: "x".repeat(1024 * 1024) })
        )
        expect(big.status).toBe(413)
        expect(big.body.code).toBe("request_too_large")
        const charset = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] }, {
          contentType: "application/json; charset=utf-8"
        })
        expect(charset.status).toBe(201)
      })))
  })

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

  describe("GET /checkout_sessions/:id", () => {
    it.effect("returns the latest state; 404 for an unknown id", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 2 }])
        const read = yield* get(`/checkout_sessions/${created.id}`)
        expect(read.status).toBe(200)
        expect(read.body).toEqual(created)
        const missing = yield* get("/checkout_sessions/cs_doesnotexist")
        expect(missing.status).toBe(404)
        expect(missing.body).toMatchObject({ type: "invalid_request", code: "not_found" })
      })))
  })

  describe("POST /checkout_sessions/:id (update)", () => {
    it.effect("replaces items, updates buyer and address, selects an offered option", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] })
        const id = created.body.id
        const withAddress = yield* post(`/checkout_sessions/${id}`, { fulfillment_address: address, buyer })
        expect(withAddress.status).toBe(200)
        expect(withAddress.body.status).toBe("ready_for_payment")
        expect(withAddress.body.fulfillment_option_id).toBe("standard")
        const express = yield* post(`/checkout_sessions/${id}`, { fulfillment_option_id: "express" })
        expect(express.body.fulfillment_option_id).toBe("express")
        expect(express.body.totals.find((t: { type: string }) => t.type === "fulfillment").amount).toBe(1500)
        const replaced = yield* post(`/checkout_sessions/${id}`, { items: [{ id: "tshirt-classic", quantity: 3 }] })
        expect(replaced.body.line_items.map((l: { item: unknown }) => l.item)).toEqual([{
          id: "tshirt-classic",
          quantity: 3
        }])
        expect(replaced.body.fulfillment_option_id).toBe("express")
        expect(replaced.body.buyer).toEqual(buyer)
        const emptied = yield* post(`/checkout_sessions/${id}`, { items: [] })
        expect(emptied.status).toBe(200)
        expect(emptied.body.status).toBe("not_ready_for_payment")
        expect(emptied.body.messages.map((m: { param: string }) => m.param)).toContain("$.items")
      })))

    it.effect("a shipping country with no method: options vanish and a message says so", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const moved = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_address: { ...address, country: "JP" }
        })
        expect(moved.status).toBe(200)
        expect(moved.body.fulfillment_options).toEqual([])
        expect(moved.body.status).toBe("not_ready_for_payment")
        expect(moved.body.messages).toContainEqual(
          expect.objectContaining({ code: "invalid", param: "$.fulfillment_address.country" })
        )
        const gb = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_address: { ...address, country: "GB" }
        })
        expect(gb.body.fulfillment_option_id).toBe("international")
      })))

    it.effect("400 for an option that is not offered; the stored session is unchanged", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const before = yield* get(`/checkout_sessions/${created.id}`)
        const bad = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_option_id: "teleport",
          buyer: { ...buyer, first_name: "Changed" }
        })
        expect(bad.status).toBe(400)
        expect(bad.body).toMatchObject({ code: "invalid", param: "$.fulfillment_option_id" })
        const invalidItems = yield* post(`/checkout_sessions/${created.id}`, {
          items: [{ id: "mug-ceramic", quantity: -1 }]
        })
        expect(invalidItems.status).toBe(400)
        expect(invalidItems.body.param).toBe("$.items[0].quantity")
        const after = yield* get(`/checkout_sessions/${created.id}`)
        expect(after.body).toEqual(before.body)
      })))

    it.effect("404 for an unknown session; 422 session_not_modifiable once final", () =>
      run(Effect.gen(function*() {
        expect((yield* post("/checkout_sessions/cs_missing", { buyer })).status).toBe(404)
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${created.id}/cancel`)
        const late = yield* post(`/checkout_sessions/${created.id}`, { buyer })
        expect(late.status).toBe(422)
        expect(late.body).toMatchObject({ type: "invalid_request", code: "session_not_modifiable" })
      })))
  })

  describe("POST /checkout_sessions/:id/complete", () => {
    it.effect("charges, completes and returns the order (200), with both payment_data shapes", () =>
      run(Effect.gen(function*() {
        for (const payment_data of [paymentData, { token: "tok_visa", provider: "acp_vault" }]) {
          const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data })
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          expect(completed.body.order).toEqual({
            id: expect.stringMatching(/^ord_/),
            checkout_session_id: created.id,
            permalink_url: expect.stringMatching(/^https:\/\/merchant\.test\/order-status\/[0-9A-Za-z]{22}$/)
          })
          const read = yield* get(`/checkout_sessions/${created.id}`)
          expect(read.body.status).toBe("completed")
        }
      })))

    it.effect("buyer in the body is applied first", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          fulfillment_address: address
        })
        expect(created.body.status).toBe("not_ready_for_payment")
        const completed = yield* post(`/checkout_sessions/${created.body.id}/complete`, {
          buyer,
          payment_data: paymentData
        })
        expect(completed.status).toBe(200)
        expect(completed.body.buyer).toEqual(buyer)
      })))

    it.effect("422 session_not_ready when something is missing", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }], buyer })
        const response = yield* post(`/checkout_sessions/${created.body.id}/complete`, { payment_data: paymentData })
        expect(response.status).toBe(422)
        expect(response.body).toMatchObject({
          type: "invalid_request",
          code: "session_not_ready",
          param: "$.fulfillment_address"
        })
        expect((yield* get(`/checkout_sessions/${created.body.id}`)).body.status).toBe("not_ready_for_payment")
      })))

    it.effect("400 for bad payment_data, naming the field of the shape sent", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const path = `/checkout_sessions/${created.id}/complete`
        const cases: ReadonlyArray<[unknown, string, string]> = [
          [{}, "$.payment_data", "missing"],
          [{ payment_data: "tok" }, "$.payment_data", "invalid"],
          [{ payment_data: {} }, "$.payment_data.handler_id", "missing"],
          [{ payment_data: { handler_id: "card_tokenized" } }, "$.payment_data.instrument", "missing"],
          [
            { payment_data: { ...paymentData, instrument: { type: "card", credential: { type: "spt" } } } },
            "$.payment_data.instrument.credential.token",
            "missing"
          ],
          [{ payment_data: { token: "tok_visa" } }, "$.payment_data.provider", "missing"],
          [{ payment_data: { ...paymentData, handler_id: "paypal" } }, "$.payment_data.handler_id", "invalid"],
          [{ payment_data: { token: "tok_visa", provider: "unknown_psp" } }, "$.payment_data.provider", "invalid"],
          // Keys of both shapes: the handler shape is meant, and its missing instrument is refused.
          [
            { payment_data: { handler_id: "card_tokenized", token: "tok_visa", provider: "acp_vault" } },
            "$.payment_data.instrument",
            "missing"
          ],
          [
            { payment_data: { instrument: paymentData.instrument, token: "tok_visa", provider: "acp_vault" } },
            "$.payment_data.handler_id",
            "missing"
          ],
          [{ payment_data: paymentData, buyer: { ...buyer, email: 3 } }, "$.buyer.email", "invalid"]
        ]
        for (const [body, param, code] of cases) {
          const response = yield* post(path, body)
          expect(response.status, JSON.stringify(body)).toBe(400)
          expect(response.body).toMatchObject({ code, param })
        }
        expect((yield* get(`/checkout_sessions/${created.id}`)).body.status).toBe("ready_for_payment")
      })))

    it.effect("409 on a completed or canceled session; 404 on an unknown one", () =>
      run(Effect.gen(function*() {
        const done = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${done.id}/complete`, { payment_data: paymentData })
        const again = yield* post(`/checkout_sessions/${done.id}/complete`, { payment_data: paymentData })
        expect(again.status).toBe(409)
        expect(again.body).toMatchObject({ type: "invalid_request", code: "session_completed" })
        const canceled = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${canceled.id}/cancel`)
        const onCanceled = yield* post(`/checkout_sessions/${canceled.id}/complete`, { payment_data: paymentData })
        expect(onCanceled.status).toBe(409)
        expect(onCanceled.body.code).toBe("session_canceled")
        expect((yield* post("/checkout_sessions/cs_nope/complete", { payment_data: paymentData })).status).toBe(404)
      })))

    it.effect("a decline is 402 payment_declined; the session stays payable with a message", () => {
      const declining = Layer.succeed(PaymentProvider, {
        threeDSecure: false,
        authorize: () => Effect.void,
        charge: () => Effect.fail(new PaymentDeclined({ reason: "card_declined", message: "Your card was declined." })),
        release: () => Effect.void
      })
      return run(
        Effect.gen(function*() {
          const created = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const response = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
          expect(response.status).toBe(402)
          expect(response.body).toMatchObject({ type: "processing_error", code: "payment_declined" })
          const session = (yield* get(`/checkout_sessions/${created.id}`)).body
          expect(session.status).toBe("ready_for_payment")
          expect(session.messages).toContainEqual(expect.objectContaining({ type: "error", code: "payment_declined" }))
          // the stock stays reserved for this session: 2 of the 3 prints remain
          expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 3 }] })).status).toBe(
            422
          )
          expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 2 }] })).status).toBe(
            201
          )
        }),
        { payments: declining }
      )
    })
  })

  describe("POST /checkout_sessions/:id/cancel", () => {
    it.effect("cancels with the full session (200); 405 when final; 404 when unknown", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const canceled = yield* post(`/checkout_sessions/${created.id}/cancel`)
        expect(canceled.status).toBe(200)
        expect(canceled.body).toMatchObject({ id: created.id, status: "canceled", line_items: created.line_items })
        const twice = yield* post(`/checkout_sessions/${created.id}/cancel`)
        expect(twice.status).toBe(405)
        expect(twice.body).toMatchObject({ type: "invalid_request", code: "session_canceled" })
        const done = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${done.id}/complete`, { payment_data: paymentData })
        const late = yield* post(`/checkout_sessions/${done.id}/cancel`)
        expect(late.status).toBe(405)
        expect(late.body.code).toBe("session_completed")
        expect((yield* post("/checkout_sessions/cs_nope/cancel")).status).toBe(404)
      })))
  })

  describe("inventory", () => {
    it.effect("never reserves more than the stock; cancel releases; complete consumes", () =>
      run(Effect.gen(function*() {
        // print-limited has 3 units
        const a = yield* createReadySession([{ id: "print-limited", quantity: 2 }])
        const tooMany = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }, { id: "print-limited", quantity: 2 }]
        })
        expect(tooMany.status).toBe(422)
        expect(tooMany.body).toMatchObject({ type: "invalid_request", code: "out_of_stock", param: "$.items[1]" })
        const b = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })).status).toBe(422)
        yield* post(`/checkout_sessions/${a.id}/cancel`)
        const c = yield* createReadySession([{ id: "print-limited", quantity: 2 }])
        yield* post(`/checkout_sessions/${b.id}/complete`, { payment_data: paymentData })
        yield* post(`/checkout_sessions/${c.id}/complete`, { payment_data: paymentData })
        const soldOut = yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })
        expect(soldOut.status).toBe(422)
        expect(soldOut.body.code).toBe("out_of_stock")
      })))

    it.effect("duplicate lines of one product count together; an update beyond stock leaves the session unchanged", () =>
      run(Effect.gen(function*() {
        const dup = yield* post("/checkout_sessions", {
          items: [{ id: "print-limited", quantity: 2 }, { id: "print-limited", quantity: 2 }]
        })
        expect(dup.status).toBe(422)
        expect(dup.body.param).toBe("$.items[1]")
        const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
        const grow = yield* post(`/checkout_sessions/${session.id}`, { items: [{ id: "print-limited", quantity: 3 }] })
        expect(grow.status).toBe(200) // its own unit counts as available to it
        const beyond = yield* post(`/checkout_sessions/${session.id}`, {
          items: [{ id: "print-limited", quantity: 4 }]
        })
        expect(beyond.status).toBe(422)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.line_items[0].item.quantity).toBe(3)
        const shrink = yield* post(`/checkout_sessions/${session.id}`, { items: [{ id: "mug-ceramic", quantity: 1 }] })
        expect(shrink.status).toBe(200)
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 3 }] })).status).toBe(201)
      })))

    it.effect("concurrent creates never oversell", () =>
      run(Effect.gen(function*() {
        const results = yield* Effect.all(
          Array.from(
            { length: 10 },
            () => post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })
          ),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r.status === 201)).toHaveLength(3)
        expect(results.filter((r) => r.status === 422)).toHaveLength(7)
      })))
  })

  describe("expiry (TestClock)", () => {
    it.effect("an idle session expires after SESSION_TTL_SECONDS and releases its stock", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "print-limited", quantity: 3 }])
        yield* TestClock.adjust(ttlMillis - 1)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 1 }] })).status).toBe(422)
        yield* TestClock.adjust(1)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("expired")
        expect((yield* post("/checkout_sessions", { items: [{ id: "print-limited", quantity: 3 }] })).status).toBe(201)
        const update = yield* post(`/checkout_sessions/${session.id}`, { buyer })
        expect(update.status).toBe(422)
        expect(update.body.code).toBe("session_not_modifiable")
        const complete = yield* post(`/checkout_sessions/${session.id}/complete`, { payment_data: paymentData })
        expect(complete.status).toBe(409)
        expect(complete.body.code).toBe("session_expired")
        const cancel = yield* post(`/checkout_sessions/${session.id}/cancel`)
        expect(cancel.status).toBe(405)
        expect(cancel.body.code).toBe("session_expired")
      })))

    it.effect("an update resets the idle timer", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* TestClock.adjust(ttlMillis - 1000)
        yield* post(`/checkout_sessions/${session.id}`, { buyer })
        yield* TestClock.adjust(2000)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
      })))

    it.effect("the sweeper stores the expired status", () =>
      run(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        expect(yield* checkout.expireDue(100)).toBe(0)
        yield* TestClock.adjust(ttlMillis)
        expect(yield* checkout.expireDue(100)).toBe(1)
        expect(yield* checkout.expireDue(100)).toBe(0)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("expired")
      })))
  })
}

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`Checkout API on ${store.name}`, () => {
    store.register()
    checkoutApiSuite(store)
  })
}
