/**
 * The order-event receiver across ACP versions: which version a body is read in (the API-Version
 * header, else its shape), the open values of 2026-04-17 and its release-day shape accepted and
 * kept, malformed bodies refused with the JSONPath of the problem, the signature checked first.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import type { AppConfigShape } from "../../src/platform/config.ts"
import { signPayload } from "../../src/shared/hmac-signature.ts"
import { get, request, testApp } from "../support/http.ts"
import { UnusedPaymentProvider } from "../support/webhooks.ts"

const SECRET = "whsec_test"
const NOW_SECONDS = 1_767_225_600 // 2026-01-01T00:00:00Z
const AT = "2026-01-01T00:00:00Z"

const app = (config: Partial<AppConfigShape> = {}) => testApp({ payments: UnusedPaymentProvider, config })
const run = <A, E>(effect: Effect.Effect<A, E, any>, layer: Layer.Layer<any, any, any> = app()) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW_SECONDS * 1000), effect),
    layer as Layer.Layer<any>
  ) as Effect.Effect<A, E, never>

/** `data` of a 2026-04-17 event. */
const order0417 = (extra: Record<string, unknown> = {}) => ({
  type: "order",
  id: "ord_1",
  checkout_session_id: "cs_1",
  permalink_url: "https://merchant.test/orders/ord_1",
  status: "confirmed",
  line_items: [{ id: "li_1", title: "Running Shoes", quantity: { ordered: 2, current: 2, fulfilled: 0 } }],
  ...extra
})

/** `data` of a 2025-09-29 / 2026-01-30 event (official shape: no id). */
const order0130 = (extra: Record<string, unknown> = {}) => ({
  type: "order",
  checkout_session_id: "cs_1",
  permalink_url: "https://merchant.test/orders/ord_1",
  status: "confirmed",
  refunds: [],
  ...extra
})

interface DeliverOptions {
  /** The API-Version header; absent by default (the official webhook files define none). */
  readonly version?: string
  readonly requestId?: string
  readonly secret?: string
}

/** POSTs `event` (JSON) signed, as a sender would. */
const deliver = (event: unknown, options: DeliverOptions = {}) => {
  const body = JSON.stringify(event)
  return request("POST", "/agentic_checkout/webhooks/order_events", {
    body,
    auth: false,
    version: options.version ?? false,
    headers: {
      "merchant-signature": signPayload(options.secret ?? SECRET, NOW_SECONDS, body),
      ...(options.requestId !== undefined ? { "request-id": options.requestId } : {})
    }
  })
}

describe("2026-04-17 bodies: open values are accepted and kept", () => {
  it.effect("unknown event type, order/line/fulfillment/event/adjustment statuses and types, total types → 200", () =>
    run(Effect.gen(function*() {
      const data = order0417({
        status: "partially_returned",
        line_items: [{
          id: "li_1",
          title: "Running Shoes",
          quantity: { ordered: 2, current: 1, fulfilled: 1 },
          status: "backordered"
        }],
        fulfillments: [{
          id: "ful_1",
          type: "drone",
          status: "hovering",
          line_items: [{ id: "li_1", quantity: 1 }],
          events: [{ id: "fev_1", type: "teleported", occurred_at: AT, location: "Roof" }]
        }],
        adjustments: [{
          id: "adj_1",
          type: "goodwill",
          occurred_at: AT,
          status: "in_review",
          amount: 100,
          currency: "usd",
          reason: "late"
        }],
        totals: [{ type: "loyalty_points", display_text: "Points", amount: 5 }],
        order_number: "A-1",
        future_field: { kept: true }
      })
      const named = yield* deliver({ type: "order_returned", data }, { version: "2026-04-17", requestId: "evt_1" })
      expect(named.status).toBe(200)
      expect(named.body).toEqual({ received: true, request_id: "evt_1" })
      // The same shape without the header is recognised as 2026-04-17 (no refunds).
      const recognised = yield* deliver({ type: "order_reviewed", data: { ...data, status: "reviewed" } }, {
        requestId: "evt_2"
      })
      expect(recognised.status).toBe(200)

      const stored = yield* get("/agentic_checkout/orders/ord_1")
      expect(stored.status).toBe(200)
      expect(stored.body.status).toBe("reviewed")
      expect(stored.body.events.map((e: { type: string; status: string; data: unknown }) => [e.type, e.status, e.data]))
        .toEqual([["order_returned", "partially_returned", data], [
          "order_reviewed",
          "reviewed",
          { ...data, status: "reviewed" }
        ]])
    })))

  it.effect("the release-day shape (quantity.shipped, delivered, partial_refund, store_credit, chargeback, returned) → 200", () =>
    run(Effect.gen(function*() {
      const data = order0417({
        status: "delivered",
        line_items: [{ id: "li_1", title: "Running Shoes", quantity: { ordered: 2, shipped: 2 }, status: "delivered" }],
        fulfillments: [{
          id: "ful_1",
          type: "shipping",
          status: "delivered",
          events: [{ id: "fev_1", type: "returned", occurred_at: AT }]
        }],
        adjustments: ["partial_refund", "store_credit", "chargeback"].map((type, i) => ({
          id: `adj_${i + 1}`,
          type,
          occurred_at: AT,
          status: "completed",
          amount: 100
        }))
      })
      expect((yield* deliver({ type: "order_update", data }, { version: "2026-04-17" })).status).toBe(200)
      expect((yield* get("/agentic_checkout/orders/ord_1")).body).toMatchObject({ status: "delivered", order: data })
    })))
})

describe("the version a body is read in", () => {
  it.effect("the API-Version header decides; without it, data.refunds marks 2025-09-29 / 2026-01-30", () =>
    run(Effect.gen(function*() {
      // The official 2026-01-30 shape: no id, so the order is kept under its checkout session.
      expect((yield* deliver({ type: "order_create", data: order0130() })).status).toBe(200)
      expect(
        (yield* deliver({ type: "order_update", data: order0130({ status: "shipped" }) }, {
          version: "2026-01-30"
        })).status
      ).toBe(200)
      expect((yield* get("/agentic_checkout/orders/cs_1")).body.status).toBe("shipped")

      // Named 2026-04-17, the same body lacks the id that version requires.
      const as0417 = yield* deliver({ type: "order_update", data: order0130() }, { version: "2026-04-17" })
      expect(as0417.status).toBe(400)
      expect(as0417.body).toMatchObject({ type: "invalid_request", code: "missing", param: "$.data.id" })
      // Named 2025-09-29, a 2026-04-17 body lacks the refunds that version requires.
      const as0929 = yield* deliver({ type: "order_update", data: order0417() }, { version: "2025-09-29" })
      expect(as0929.status).toBe(400)
      expect(as0929.body).toMatchObject({ code: "missing", param: "$.data.refunds" })
      // Event types stay closed up to 2026-01-30.
      const unknownType = yield* deliver({ type: "order_returned", data: order0130() })
      expect(unknownType.status).toBe(400)
      expect(unknownType.body).toMatchObject({ code: "invalid", param: "$.type" })
    })))

  it.effect("an API-Version that is not accepted → 400 unsupported_api_version; the signature is checked first", () =>
    run(
      Effect.gen(function*() {
        for (const version of ["2026-01-16", "2025-09-29", "soon", ""]) {
          const response = yield* deliver({ type: "order_update", data: order0417() }, { version })
          expect(response.status, version).toBe(400)
          expect(response.body).toEqual({
            type: "invalid_request",
            code: "unsupported_api_version",
            message: "API-Version must be one of 2026-04-17, 2026-01-30, or absent.",
            param: "$.headers['API-Version']"
          })
        }
        const unsigned = yield* deliver({ type: "order_update", data: order0417() }, {
          version: "soon",
          secret: "whsec_other"
        })
        expect(unsigned.status).toBe(401)
        expect(unsigned.body.code).toBe("invalid_signature")
        expect((yield* deliver({ type: "order_update", data: order0417() }, { version: "2026-04-17" })).status)
          .toBe(200)
      }),
      app({ apiVersions: ["2026-04-17", "2026-01-30"] })
    ))
})

describe("malformed 2026-04-17 bodies → 400 with the JSONPath of the first problem", () => {
  const line = { id: "li_1", title: "Running Shoes", quantity: { ordered: 2, current: 2 } }
  const adjustment = { id: "adj_1", type: "refund", occurred_at: AT, status: "completed" }
  const cases: Array<[string, unknown, string, string]> = [
    ["event type not a string", { type: 7, data: order0417() }, "invalid", "$.type"],
    ["no data", { type: "order_update" }, "missing", "$.data"],
    ["no order id", { type: "order_update", data: { ...order0417(), id: undefined } }, "missing", "$.data.id"],
    ["data.type not order", { type: "order_update", data: order0417({ type: "refund" }) }, "invalid", "$.data.type"],
    ["status not a string", { type: "order_update", data: order0417({ status: 7 }) }, "invalid", "$.data.status"],
    [
      "status too long",
      { type: "order_update", data: order0417({ status: "x".repeat(65) }) },
      "invalid",
      "$.data.status"
    ],
    [
      "line without title",
      { type: "order_update", data: order0417({ line_items: [{ ...line, title: undefined }] }) },
      "missing",
      "$.data.line_items[0].title"
    ],
    [
      "ordered 0",
      { type: "order_update", data: order0417({ line_items: [{ ...line, quantity: { ordered: 0, current: 0 } }] }) },
      "invalid",
      "$.data.line_items[0].quantity.ordered"
    ],
    [
      "negative current",
      { type: "order_update", data: order0417({ line_items: [{ ...line, quantity: { ordered: 1, current: -1 } }] }) },
      "invalid",
      "$.data.line_items[0].quantity.current"
    ],
    [
      "fractional adjustment amount",
      { type: "order_update", data: order0417({ adjustments: [{ ...adjustment, amount: 1.5 }] }) },
      "invalid",
      "$.data.adjustments[0].amount"
    ],
    [
      "adjustment without status",
      { type: "order_update", data: order0417({ adjustments: [{ ...adjustment, status: undefined }] }) },
      "missing",
      "$.data.adjustments[0].status"
    ],
    [
      "fulfillment events not an array",
      { type: "order_update", data: order0417({ fulfillments: [{ id: "ful_1", type: "shipping", events: {} }] }) },
      "invalid",
      "$.data.fulfillments[0].events"
    ],
    [
      "total amount as text",
      {
        type: "order_update",
        data: order0417({ totals: [{ type: "total", display_text: "Total", amount: "5" }] })
      },
      "invalid",
      "$.data.totals[0].amount"
    ]
  ]

  it.effect("with and without API-Version", () =>
    run(Effect.gen(function*() {
      for (const [name, event, code, param] of cases) {
        for (const version of ["2026-04-17", undefined]) {
          const response = yield* deliver(event, version !== undefined ? { version } : {})
          expect(response.status, `${name} (${version})`).toBe(400)
          expect(response.body, name).toMatchObject({ type: "invalid_request", code, param })
        }
      }
      expect((yield* get("/agentic_checkout/orders")).body.data).toEqual([])
    })))
})
