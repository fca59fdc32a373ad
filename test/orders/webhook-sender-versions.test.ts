/**
 * Order events in every served ACP version: what the sender posts under each `WEBHOOK_API_VERSION`
 * (checked strictly against that version's event schema) and the round trip through this
 * process's own receiver. What the receiver accepts and refuses: `test/webhooks/webhook-receiver-versions.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema, TestClock } from "effect"
import { makeWebhookSender } from "../../src/orders/http/webhook-sender.ts"
import type { Order } from "../../src/orders/model/order.ts"
import { WebhookTransport } from "../../src/orders/webhook-transport.ts"
import { ORDER_EVENT_WIRES } from "../../src/orders/wire/acp/versions.ts"
import type { AppConfigShape } from "../../src/platform/config.ts"
import { API_VERSION_NAMES, type ApiVersionName } from "../../src/shared/api-versions.ts"
import { get, post, testApp } from "../support/http.ts"
import {
  type Answer,
  createOrder,
  scriptedTransport,
  type SentRequest,
  UnusedPaymentProvider
} from "../support/webhooks.ts"

const NOW = 1_767_225_600_000 // 2026-01-01T00:00:00Z
const AT = new Date(NOW).toISOString()

const app = (config: Partial<AppConfigShape> = {}) =>
  testApp({ payments: UnusedPaymentProvider, config: { port: 8080, ...config } })
const run = <A, E>(effect: Effect.Effect<A, E, any>, layer: Layer.Layer<any, any, any> = app()) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), layer as Layer.Layer<any>) as Effect.Effect<
    A,
    E,
    never
  >

const ship = { carrier: "UPS", tracking_number: "1Z999", tracking_url: "https://ups.example/1Z999" }

/**
 * A physical order through its whole life (confirm, ship, fulfill, refund to the card, store
 * credit) and a digital one canceled, each change delivered at once by a sender answered with
 * `answer`. Returns the order after each change and every request posted.
 */
const lifecycle = (answer: Answer) =>
  Effect.gen(function*() {
    const { sent, transport } = yield* scriptedTransport([], answer)
    const sender = yield* makeWebhookSender().pipe(Effect.provideService(WebhookTransport, transport))
    const deliver = Effect.map(sender.deliverDue, (reports) => {
      expect(reports.map((r) => r.outcome)).toEqual(["delivered"])
    })
    const order = yield* createOrder()
    yield* deliver
    const states: Array<Order> = [order]
    const changes: Array<[string, unknown?]> = [
      ["confirm"],
      ["ship", ship],
      ["fulfill"],
      ["refunds", { type: "original_payment", amount: 500 }],
      ["refunds", { type: "store_credit", amount: 300 }]
    ]
    for (const [change, body] of changes) {
      const changed = yield* post(`/orders/${order.id}/${change}`, body)
      expect(changed.status).toBe(200)
      states.push(changed.body)
      yield* deliver
    }
    const canceled = yield* createOrder([{ id: "ebook-field-guide", quantity: 1 }])
    yield* deliver
    expect((yield* post(`/orders/${canceled.id}/cancel`)).status).toBe(200)
    yield* deliver
    const requests = yield* sent
    return { order, states, canceled, requests, bodies: requests.map((r) => JSON.parse(r.body)) }
  })

/** Decodes `body` with `version`'s event schema as sent: nothing missing, nothing extra at any depth. */
const strictlyValid = (version: ApiVersionName, body: unknown) =>
  Schema.decodeUnknownEither(ORDER_EVENT_WIRES[version].sent, { onExcessProperty: "error" })(body)

const expectEveryBodyStrict = (version: ApiVersionName, requests: ReadonlyArray<SentRequest>) => {
  for (const request of requests) {
    expect(request.headers["api-version"]).toBe(version)
    const decoded = strictlyValid(version, JSON.parse(request.body))
    if (Either.isLeft(decoded)) throw new Error(`${version} body does not match its schema: ${decoded.left.message}`)
  }
}

describe("the sender posts the configured version (WEBHOOK_API_VERSION)", () => {
  it.effect("2025-09-29: the full order exactly as the order routes show it", () =>
    run(
      Effect.gen(function*() {
        const { bodies, requests, states } = yield* lifecycle({ status: 200 })
        expectEveryBodyStrict("2025-09-29", requests)
        expect(bodies.slice(0, states.length)).toEqual(
          states.map((state, i) => ({ type: i === 0 ? "order_create" : "order_update", data: state }))
        )
        expect(bodies.at(-1).data).toMatchObject({ status: "canceled", refunds: [] })
      }),
      app({ webhookApiVersion: "2025-09-29" })
    ))

  it.effect("2026-01-30: only type, checkout_session_id, permalink_url, status and refunds", () =>
    run(
      Effect.gen(function*() {
        const { bodies, order, requests } = yield* lifecycle({ status: 200 })
        expectEveryBodyStrict("2026-01-30", requests)
        const base = {
          type: "order",
          checkout_session_id: order.checkout_session_id,
          permalink_url: order.permalink_url
        }
        expect(bodies.slice(0, 6)).toEqual([
          { type: "order_create", data: { ...base, status: "created", refunds: [] } },
          { type: "order_update", data: { ...base, status: "confirmed", refunds: [] } },
          { type: "order_update", data: { ...base, status: "shipped", refunds: [] } },
          { type: "order_update", data: { ...base, status: "fulfilled", refunds: [] } },
          {
            type: "order_update",
            data: { ...base, status: "fulfilled", refunds: [{ type: "original_payment", amount: 500 }] }
          },
          {
            type: "order_update",
            data: {
              ...base,
              status: "fulfilled",
              refunds: [{ type: "original_payment", amount: 500 }, { type: "store_credit", amount: 300 }]
            }
          }
        ])
        expect(bodies.at(-1).data.status).toBe("canceled")
      }),
      app({ webhookApiVersion: "2026-01-30" })
    ))

  it.effect("2026-04-17: the full Order, adjustments for refunds, three-field quantities, completed", () =>
    run(
      Effect.gen(function*() {
        const { bodies, canceled, order, requests, states } = yield* lifecycle({ status: 200 })
        expectEveryBodyStrict("2026-04-17", requests)
        const final = states.at(-1)!
        const lineTotals = (line: Order["line_items"][number]) => [
          { type: "subtotal", display_text: "Subtotal", amount: line.subtotal },
          { type: "tax", display_text: "Tax", amount: line.tax },
          { type: "total", display_text: "Total", amount: line.total }
        ]
        const [line] = order.line_items
        expect(order.line_items).toHaveLength(1)
        const wireLine = (current: number, fulfilled: number, status: string) => ({
          id: line!.id,
          title: line!.title,
          product_id: "tshirt-classic",
          quantity: { ordered: 2, current, fulfilled },
          unit_price: 2500,
          subtotal: line!.subtotal,
          totals: lineTotals(line!),
          status
        })
        expect(bodies[0]).toEqual({
          type: "order_create",
          data: {
            type: "order",
            id: order.id,
            checkout_session_id: order.checkout_session_id,
            permalink_url: order.permalink_url,
            status: "created",
            line_items: [wireLine(2, 0, "processing")],
            fulfillments: [],
            adjustments: [],
            totals: order.totals
          }
        })
        expect(bodies.map((b) => b.data.status).slice(0, 6)).toEqual([
          "created",
          "confirmed",
          "shipped",
          "completed",
          "completed",
          "completed"
        ])
        expect(bodies[5]).toEqual({
          type: "order_update",
          data: {
            type: "order",
            id: order.id,
            checkout_session_id: order.checkout_session_id,
            permalink_url: order.permalink_url,
            status: "completed",
            line_items: [wireLine(2, 2, "fulfilled")],
            fulfillments: [{
              id: "ful_1",
              type: "shipping",
              status: "delivered",
              line_items: [{ id: line!.id, quantity: 2 }],
              ...ship,
              events: [
                { id: "ful_1_ev_1", type: "shipped", occurred_at: AT },
                { id: "ful_1_ev_2", type: "delivered", occurred_at: AT }
              ]
            }],
            adjustments: [
              { id: "adj_1", type: "refund", occurred_at: AT, status: "completed", amount: 500, currency: "usd" },
              { id: "adj_2", type: "credit", occurred_at: AT, status: "completed", amount: 300, currency: "usd" }
            ],
            totals: final.totals
          }
        })
        expect(final.totals.at(-1)).toEqual({ type: "amount_refunded", display_text: "Refunded", amount: 800 })

        // The canceled digital order: nothing of it remains, the cancellation names what it removed.
        const [canceledLine] = canceled.line_items
        expect(bodies.at(-1).data).toMatchObject({
          id: canceled.id,
          status: "canceled",
          line_items: [{ quantity: { ordered: 1, current: 0, fulfilled: 0 }, status: "removed" }],
          adjustments: [{
            id: "adj_1",
            type: "cancellation",
            occurred_at: AT,
            status: "completed",
            line_items: [{ id: canceledLine!.id, quantity: 1 }]
          }]
        })
      }),
      app({ webhookApiVersion: "2026-04-17" })
    ))
})

describe("sender → this process's receiver, in every version", () => {
  it.effect.each(API_VERSION_NAMES)("%s: every event accepted and kept; the read routes show them", (version) =>
    run(
      Effect.gen(function*() {
        const { canceled, order, requests } = yield* lifecycle("loopback")
        expect(requests).toHaveLength(8)
        // 2026-01-30 events carry no order id: the receiver keys them by checkout session.
        const key = (o: Order) => (version === "2026-01-30" ? o.checkout_session_id : o.id)
        const received = yield* get(`/agentic_checkout/orders/${key(order)}`)
        expect(received.status).toBe(200)
        const finalStatus = version === "2026-04-17" ? "completed" : "fulfilled"
        expect(received.body.status).toBe(finalStatus)
        expect(received.body.order).toEqual(JSON.parse(requests[5]!.body).data)
        expect(received.body.events.map((e: { type: string; status: string }) => `${e.type}:${e.status}`)).toEqual([
          "order_create:created",
          "order_update:confirmed",
          "order_update:shipped",
          `order_update:${finalStatus}`,
          `order_update:${finalStatus}`,
          `order_update:${finalStatus}`
        ])
        expect((yield* get(`/agentic_checkout/orders/${key(canceled)}`)).body.status).toBe("canceled")
        const listed = (yield* get("/agentic_checkout/orders")).body.data.map((o: { order_id: string }) => o.order_id)
        expect(new Set(listed)).toEqual(new Set([key(order), key(canceled)]))
      }),
      app({ webhookApiVersion: version })
    ))
})
