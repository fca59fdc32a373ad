import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { OrderStore } from "../../src/orders/order-store.ts"
import { ALL_ROLES, type AppConfigShape } from "../../src/platform/config.ts"
import { MAX_BODY_BYTES } from "../../src/platform/http/request-body-bytes.ts"
import { get, post, type RequestOptions, testApp, type TestResponse } from "../support/http.ts"
import { createOrder, UnusedPaymentProvider } from "../support/webhooks.ts"

const app = (config: Partial<AppConfigShape> = {}) => testApp({ payments: UnusedPaymentProvider, config })
const run = <A, E>(effect: Effect.Effect<A, E, any>, layer: Layer.Layer<any, any, any> = app()) =>
  Effect.provide(effect, layer as Layer.Layer<any>) as Effect.Effect<A, E, never>

const eventTypes = (orderId: string) =>
  Effect.flatMap(OrderStore, (store) => store.listEvents({ orderId, limit: 100 })).pipe(
    Effect.map((events) => [...events].reverse().map((e) => `${e.sequence}:${e.type}:${e.payload.data.status}`))
  )

describe("order routes", () => {
  it.effect("GET /orders/{id} returns the full order created at completion", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder([{ id: "tshirt-classic", quantity: 2 }])
      const response = yield* get(`/orders/${order.id}`)
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({
        type: "order",
        id: order.id,
        status: "created",
        refunds: [],
        fulfillments: [],
        adjustments: []
      })
      expect(response.body.line_items[0]).toMatchObject({
        title: "Classic Cotton T-Shirt",
        product_id: "tshirt-classic",
        kind: "physical",
        quantity: { ordered: 2, shipped: 0 },
        unit_price: 2500,
        subtotal: 5000
      })
      expect(response.body.totals.at(-1)).toMatchObject({ type: "total", amount: 5988 })
      expect(yield* eventTypes(order.id)).toEqual(["1:order_create:created"])
    })))

  it.effect("confirm → ship → fulfill, each queuing an order_update with the full order", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder()
      expect((yield* post(`/orders/${order.id}/confirm`)).body.status).toBe("confirmed")
      yield* TestClock.adjust("1 hour")
      const shipped = yield* post(`/orders/${order.id}/ship`, {
        carrier: "UPS",
        tracking_number: "1Z999",
        tracking_url: "https://ups.test/1Z999"
      })
      expect(shipped.status).toBe(200)
      expect(shipped.body.status).toBe("shipped")
      expect(shipped.body.fulfillments).toEqual([
        {
          id: "ful_1",
          type: "shipping",
          status: "shipped",
          line_items: [{ id: order.line_items[0]!.id, quantity: 2 }],
          carrier: "UPS",
          tracking_number: "1Z999",
          tracking_url: "https://ups.test/1Z999",
          events: [{ id: "ful_1_ev_1", type: "shipped", occurred_at: "1970-01-01T01:00:00.000Z" }]
        }
      ])
      expect(shipped.body.line_items[0].quantity).toEqual({ ordered: 2, shipped: 2 })
      const fulfilled = yield* post(`/orders/${order.id}/fulfill`)
      expect(fulfilled.body.status).toBe("fulfilled")
      expect((yield* get(`/orders/${order.id}`)).body.status).toBe("fulfilled")
      expect(yield* eventTypes(order.id)).toEqual([
        "1:order_create:created",
        "2:order_update:confirmed",
        "3:order_update:shipped",
        "4:order_update:fulfilled"
      ])
    })))

  it.effect("hold for review, then cancel; a digital order is fulfilled straight from confirmed", () =>
    run(Effect.gen(function*() {
      const physical = yield* createOrder()
      expect((yield* post(`/orders/${physical.id}/hold`)).body.status).toBe("manual_review")
      const canceled = yield* post(`/orders/${physical.id}/cancel`)
      expect(canceled.body.status).toBe("canceled")
      expect(canceled.body.adjustments).toMatchObject([{ id: "adj_1", type: "cancellation", status: "completed" }])

      const digital = yield* createOrder([{ id: "ebook-field-guide", quantity: 1 }])
      yield* post(`/orders/${digital.id}/confirm`)
      const fulfilled = yield* post(`/orders/${digital.id}/fulfill`)
      expect(fulfilled.status).toBe(200)
      expect(fulfilled.body.fulfillments[0]).toMatchObject({ type: "digital", status: "delivered" })
    })))

  it.effect("a transition the status does not allow is 409 invalid_order_transition, and queues nothing", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder()
      const response = yield* post(`/orders/${order.id}/ship`, { carrier: "UPS", tracking_number: "1Z" })
      expect(response.status).toBe(409)
      expect(response.body).toEqual({
        type: "invalid_request",
        code: "invalid_order_transition",
        message: "The order is created and cannot become shipped."
      })
      yield* post(`/orders/${order.id}/confirm`)
      expect((yield* post(`/orders/${order.id}/fulfill`)).status).toBe(409) // physical: must ship first
      expect((yield* post(`/orders/${order.id}/hold`)).status).toBe(409)
      expect(yield* eventTypes(order.id)).toEqual(["1:order_create:created", "2:order_update:confirmed"])
    })))

  it.effect("refunds: not while created (409), up to the total, above it 422 with the remainder", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder() // total 5988
      const early = yield* post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 100 })
      expect(early.status).toBe(409)
      expect(early.body.code).toBe("refund_not_allowed")

      yield* post(`/orders/${order.id}/confirm`)
      const first = yield* post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 5000 })
      expect(first.status).toBe(200)
      expect(first.body.refunds).toEqual([{ type: "original_payment", amount: 5000 }])
      expect(first.body.totals.at(-1)).toEqual({ type: "amount_refunded", display_text: "Refunded", amount: 5000 })

      const tooMuch = yield* post(`/orders/${order.id}/refunds`, { type: "store_credit", amount: 989 })
      expect(tooMuch.status).toBe(422)
      expect(tooMuch.body).toEqual({
        type: "invalid_request",
        code: "refund_exceeds_total",
        message: "The refund exceeds the refundable remainder of 988.",
        param: "$.amount"
      })
      const rest = yield* post(`/orders/${order.id}/refunds`, { type: "store_credit", amount: 988 })
      expect(rest.status).toBe(200)
      expect(rest.body.refunds).toHaveLength(2)
      expect((yield* post(`/orders/${order.id}/refunds`, { type: "store_credit", amount: 1 })).status).toBe(422)
      expect(yield* eventTypes(order.id)).toEqual([
        "1:order_create:created",
        "2:order_update:confirmed",
        "3:order_update:confirmed",
        "4:order_update:confirmed"
      ])
    })))

  it.effect("bodies are validated: 400 with the JSONPath of the first problem", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder()
      yield* post(`/orders/${order.id}/confirm`)
      const missing = yield* post(`/orders/${order.id}/ship`, { carrier: "UPS" })
      expect(missing.status).toBe(400)
      expect(missing.body).toMatchObject({ type: "invalid_request", code: "missing", param: "$.tracking_number" })
      const badType = yield* post(`/orders/${order.id}/refunds`, { type: "cash", amount: 10 })
      expect(badType.status).toBe(400)
      expect(badType.body).toMatchObject({ code: "invalid", param: "$.type" })
      expect(badType.body.message).toBe("$.type must be one of \"store_credit\", \"original_payment\"")
      for (const amount of [0, -1]) {
        const notPositive = yield* post(`/orders/${order.id}/refunds`, { type: "store_credit", amount })
        expect(notPositive.status).toBe(400)
        expect(notPositive.body).toMatchObject({
          code: "invalid",
          param: "$.amount",
          message: "$.amount must be a positive integer amount in minor units"
        })
      }
      const notJson = yield* post(`/orders/${order.id}/refunds`, "{", {})
      expect(notJson.status).toBe(400)
      expect(notJson.body.code).toBe("invalid_json")
    })))

  it.effect("the routes without a body hold one sent to the rules of every body, as ship does; nothing changes", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder()
      const before = yield* get(`/orders/${order.id}`)
      const refused: ReadonlyArray<readonly [string, Omit<RequestOptions, "body">, number, string]> = [
        [JSON.stringify({ pad: "x".repeat(MAX_BODY_BYTES) }), {}, 413, "request_too_large"],
        ["{", {}, 400, "invalid_json"],
        ["{}", { contentType: "text/plain" }, 400, "invalid_content_type"],
        ["{}", { headers: { "content-encoding": "gzip" } }, 400, "invalid_content_type"]
      ]
      const paths = ["confirm", "hold", "fulfill", "cancel"].map((action) => `/orders/${order.id}/${action}`)
      for (const [body, options, status, code] of refused) {
        const ship = yield* post(`/orders/${order.id}/ship`, body, options)
        expect([ship.status, ship.body.code], body.slice(0, 20)).toEqual([status, code])
        for (const path of [...paths, "/webhooks/deliveries/evt_unknown/redrive"]) {
          const response = yield* post(path, body, options)
          expect([response.status, response.body], `${path} ← ${body.slice(0, 20)}`).toEqual([ship.status, ship.body])
        }
      }
      expect((yield* get(`/orders/${order.id}`)).body).toEqual(before.body)
      expect(yield* eventTypes(order.id)).toEqual(["1:order_create:created"])
      // A well-formed body, or none, is ignored.
      expect((yield* post(`/orders/${order.id}/hold`, { note: "ignored" })).body.status).toBe("manual_review")
      expect((yield* post(`/orders/${order.id}/confirm`)).body.status).toBe("confirmed")
    })))

  it.effect("unknown order → 404; no bearer → 401; no API-Version → 400", () =>
    run(Effect.gen(function*() {
      const missing = yield* get("/orders/ord_nope")
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ type: "invalid_request", code: "not_found", param: "$.order_id" })
      expect((yield* post("/orders/ord_nope/confirm")).status).toBe(404)
      expect((yield* get("/orders/ord_nope", { auth: false })).status).toBe(401)
      expect((yield* get("/orders/ord_nope", { version: false })).body.code).toBe("missing_api_version")
    })))

  it.effect("an id storage could not hold (NUL in the path or query) is 400 at its name, not a 500", () =>
    run(Effect.gen(function*() {
      const cases: Array<[TestResponse, string]> = [
        [yield* get("/orders/ord_%00"), "$.order_id"],
        [yield* post("/orders/ord_%00/confirm"), "$.order_id"],
        [yield* get("/agentic_checkout/orders/ord_%00"), "$.order_id"],
        [yield* get("/webhooks/deliveries?order_id=ord_%00"), "$.order_id"],
        [yield* post("/webhooks/deliveries/evt_%00/redrive"), "$.event_id"]
      ]
      for (const [response, param] of cases) {
        expect(response.status).toBe(400)
        expect(response.body).toEqual({ type: "invalid_request", code: "invalid", message: expect.any(String), param })
      }
    })))

  it.effect("without the checkout role the order routes do not exist (404)", () =>
    run(
      Effect.gen(function*() {
        const response = yield* get("/orders/ord_any")
        expect(response.status).toBe(404)
        expect(response.body.message).toBe("No route GET /orders/ord_any.")
      }),
      app({ roles: new Set(ALL_ROLES.filter((role) => role !== "checkout")) })
    ))
})
