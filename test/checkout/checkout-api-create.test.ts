/**
 * The Checkout Session API's create (POST /checkout_sessions) through its public surface
 * (in-process HTTP), on every store (see `./checkout-api-fixtures.ts`): the priced session with its
 * options, totals and readiness messages, and the 400, 413 and content-type answers to malformed,
 * odd or oversized bodies, and to bodies in another charset or with a content coding.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts"
import { address, buyer, post } from "../support/http.ts"
import { describeCheckoutApiOnEveryStore } from "./checkout-api-fixtures.ts"

describeCheckoutApiOnEveryStore((run) => {
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

    it.effect("a body in another charset, or with a content coding, is refused before it is read (400)", () =>
      run(Effect.gen(function*() {
        const body = { items: [{ id: "mug-ceramic", quantity: 1 }] }
        for (const contentType of ["application/json; charset=\"UTF-8\"", "application/json;charset=utf8"]) {
          expect((yield* post("/checkout_sessions", body, { contentType })).status).toBe(201)
        }
        for (const charset of ["utf-16", "ISO-8859-1", "\"latin1\""]) {
          const refused = yield* post("/checkout_sessions", body, {
            contentType: `application/json; charset=${charset}`
          })
          expect(refused.status).toBe(400)
          expect(refused.body).toEqual({
            type: "invalid_request",
            code: "invalid_content_type",
            message: "Request bodies must be JSON in UTF-8: the Content-Type's charset must be utf-8 or absent."
          })
        }
        for (const coding of ["gzip", "identity, br"]) {
          const encoded = yield* post("/checkout_sessions", body, { headers: { "content-encoding": coding } })
          expect(encoded.status).toBe(400)
          expect(encoded.body).toMatchObject({
            type: "invalid_request",
            code: "invalid_content_type",
            param: "$.headers['Content-Encoding']"
          })
        }
        const identity = yield* post("/checkout_sessions", body, { headers: { "content-encoding": "Identity" } })
        expect(identity.status).toBe(201)
      })))
  })
})
