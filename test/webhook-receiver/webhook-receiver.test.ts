import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, TestClock } from "effect"
import { ALL_ROLES, type AppConfigShape } from "../../src/platform/config.ts"
import { makeInProcessRateLimiter } from "../../src/rate-limit/in-process-rate-limiter.ts"
import type { BucketOptions } from "../../src/rate-limit/model/token-bucket.ts"
import { RateLimiter } from "../../src/rate-limit/rate-limiter.ts"
import { signPayload } from "../../src/shared/hmac-signature.ts"
import { get, request, testApp } from "../support/http.ts"
import { UnusedPaymentProvider } from "../support/webhooks.ts"

const SECRET = "whsec_test"
const NOW_SECONDS = 1_767_225_600 // 2026-01-01T00:00:00Z
const PATH = "/agentic_checkout/webhooks/order_events"

const app = (config: Partial<AppConfigShape> = {}) => testApp({ payments: UnusedPaymentProvider, config })
const run = <A, E>(effect: Effect.Effect<A, E, any>, layer: Layer.Layer<any, any, any> = app()) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW_SECONDS * 1000), effect),
    layer as Layer.Layer<any>
  ) as Effect.Effect<A, E, never>

const order = (status: string, extra: Record<string, unknown> = {}) => ({
  type: "order",
  id: "ord_1",
  checkout_session_id: "cs_1",
  permalink_url: "https://merchant.test/orders/ord_1",
  status,
  refunds: [],
  ...extra
})

const eventBody = (type: string, status: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type, data: order(status, extra) })

interface DeliverOptions {
  readonly secret?: string
  readonly t?: number
  readonly requestId?: string
  /** Replaces the Merchant-Signature header; `null` omits it. */
  readonly signature?: string | null
  /** Signs this text instead of the body sent. */
  readonly signedBody?: string
  readonly contentType?: string
  readonly contentEncoding?: string
}

/** POSTs `body` to the receiver as the sender would: no bearer, no API-Version, signed. */
const deliver = (body: string, options: DeliverOptions = {}) => {
  const signature = options.signature === undefined
    ? signPayload(options.secret ?? SECRET, options.t ?? NOW_SECONDS, options.signedBody ?? body)
    : options.signature
  return request("POST", PATH, {
    body,
    auth: false,
    version: false,
    contentType: options.contentType ?? "application/json",
    headers: {
      ...(signature !== null ? { "merchant-signature": signature } : {}),
      ...(options.requestId !== undefined ? { "request-id": options.requestId } : {}),
      ...(options.contentEncoding !== undefined ? { "content-encoding": options.contentEncoding } : {})
    }
  })
}

const invalidSignature = {
  type: "invalid_request",
  code: "invalid_signature",
  message: "Missing or invalid Merchant-Signature."
}

describe("POST /agentic_checkout/webhooks/order_events: signature", () => {
  it.effect("a correctly signed event is accepted: 200 {received: true, request_id}", () =>
    run(Effect.gen(function*() {
      const response = yield* deliver(eventBody("order_create", "created"), { requestId: "evt_1" })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ received: true, request_id: "evt_1" })
      expect(response.headers.get("request-id")).toBe("evt_1")
    })))

  it.effect("tampered body, wrong secret, stale or future timestamp, malformed or missing header → 401", () =>
    run(Effect.gen(function*() {
      const body = eventBody("order_create", "created")
      const cases = [
        deliver(body, { signedBody: eventBody("order_create", "confirmed") }),
        deliver(body.replace("created", "canceled"), { signedBody: body }),
        deliver(body, { secret: "whsec_other" }),
        deliver(body, { t: NOW_SECONDS - 301 }),
        deliver(body, { t: NOW_SECONDS + 301 }),
        deliver(body, { signature: "t=abc,v1=00" }),
        deliver(body, { signature: `v1=${"0".repeat(64)}` }),
        deliver(body, { signature: "" }),
        deliver(body, { signature: null })
      ]
      for (const response of yield* Effect.all(cases)) {
        expect(response.status).toBe(401)
        expect(response.body).toEqual(invalidSignature)
      }
      // Exactly at the tolerance is still accepted.
      expect((yield* deliver(body, { t: NOW_SECONDS - 300 })).status).toBe(200)
    })))

  it.effect("every configured receiver secret is accepted (rotation)", () =>
    run(
      Effect.gen(function*() {
        expect((yield* deliver(eventBody("order_create", "created"), { secret: "whsec_old" })).status).toBe(200)
        expect((yield* deliver(eventBody("order_update", "confirmed"), { secret: "whsec_new" })).status).toBe(200)
        expect((yield* deliver(eventBody("order_update", "shipped"), { secret: SECRET })).status).toBe(401)
      }),
      app({ webhookReceiverSecrets: [Redacted.make("whsec_old"), Redacted.make("whsec_new")] })
    ))

  it.effect("the signature is checked before the payload: an unsigned bad body is 401, not 400", () =>
    run(Effect.gen(function*() {
      expect((yield* deliver("{", { signature: null })).status).toBe(401)
      expect((yield* deliver("{", { signature: null, contentType: "text/plain" })).status).toBe(401)
    })))
})

describe("POST /agentic_checkout/webhooks/order_events: body", () => {
  it.effect("invalid bodies → 400 with the JSONPath of the first problem", () =>
    run(Effect.gen(function*() {
      const cases: Array<[string, string, string]> = [
        ["{", "invalid_json", "$"],
        [JSON.stringify({ type: "order_shipped", data: order("created") }), "invalid", "$.type"],
        [JSON.stringify({ type: "order_create" }), "missing", "$.data"],
        [
          JSON.stringify({ type: "order_create", data: { ...order("created"), status: undefined } }),
          "missing",
          "$.data.status"
        ],
        [
          JSON.stringify({
            type: "order_update",
            data: order("confirmed", { refunds: [{ type: "cash", amount: 1 }] })
          }),
          "invalid",
          "$.data.refunds[0].type"
        ],
        // Text storage cannot keep is refused as in every body (a 500 when kept as jsonb).
        [
          JSON.stringify({ type: "order_create", data: { ...order("created"), note: "a\u0000b" } }),
          "invalid",
          "$.data.note"
        ],
        [JSON.stringify({ type: "order_create", data: order("created"), ["x\udc00"]: 1 }), "invalid", "$[\"x\\udc00\"]"]
      ]
      for (const [body, code, param] of cases) {
        const response = yield* deliver(body)
        expect(response.status, body).toBe(400)
        expect(response.body).toMatchObject({ type: "invalid_request", code, param })
      }
      const wrongType = yield* deliver(eventBody("order_create", "created"), { contentType: "text/plain" })
      expect(wrongType.status).toBe(400)
      expect(wrongType.body.code).toBe("invalid_content_type")
      const utf16 = yield* deliver(eventBody("order_create", "created"), {
        contentType: "application/json; charset=utf-16"
      })
      expect(utf16.status).toBe(400)
      expect(utf16.body.code).toBe("invalid_content_type")
      const gzip = yield* deliver(eventBody("order_create", "created"), { contentEncoding: "gzip" })
      expect(gzip.status).toBe(400)
      expect(gzip.body).toMatchObject({ code: "invalid_content_type", param: "$.headers['Content-Encoding']" })
      expect((yield* get("/agentic_checkout/orders/ord_1")).status).toBe(404)
    })))

  it.effect("unknown order statuses are accepted and kept", () =>
    run(Effect.gen(function*() {
      expect((yield* deliver(eventBody("order_update", "partially_shipped"), { requestId: "evt_x" })).status).toBe(200)
      const stored = yield* get("/agentic_checkout/orders/ord_1")
      expect(stored.status).toBe(200)
      expect(stored.body.status).toBe("partially_shipped")
      expect(stored.body.order.status).toBe("partially_shipped")
    })))
})

describe("receiver storage and read routes", () => {
  it.effect("a redelivery (same Request-Id, or same body) is acknowledged without a second event", () =>
    run(Effect.gen(function*() {
      const body = eventBody("order_create", "created")
      const first = yield* deliver(body, { requestId: "evt_1" })
      yield* TestClock.adjust("5 seconds")
      // Same Request-Id, signed again later (as the sender's retry does).
      const again = yield* deliver(body, { requestId: "evt_1", t: NOW_SECONDS + 5 })
      // Same bytes under another Request-Id.
      const sameBody = yield* deliver(body, { requestId: "evt_other", t: NOW_SECONDS + 5 })
      expect([first.status, again.status, sameBody.status]).toEqual([200, 200, 200])
      expect(again.body).toEqual({ received: true, request_id: "evt_1" })
      const stored = yield* get("/agentic_checkout/orders/ord_1")
      expect(stored.body.events.map((e: { request_id: string }) => e.request_id)).toEqual(["evt_1"])
    })))

  it.effect("keeps every event and the latest state; a late order_create does not undo updates", () =>
    run(Effect.gen(function*() {
      yield* deliver(eventBody("order_update", "confirmed"), { requestId: "evt_2" })
      yield* TestClock.adjust("1 second")
      yield* deliver(eventBody("order_update", "shipped", { fulfillments: [{ id: "ful_1" }] }), {
        requestId: "evt_3",
        t: NOW_SECONDS + 1
      })
      yield* deliver(eventBody("order_create", "created"), { requestId: "evt_1", t: NOW_SECONDS + 1 })
      const stored = yield* get("/agentic_checkout/orders/ord_1")
      expect(stored.status).toBe(200)
      expect(stored.body).toMatchObject({
        order_id: "ord_1",
        status: "shipped",
        updated_at: "2026-01-01T00:00:01.000Z",
        order: { status: "shipped", fulfillments: [{ id: "ful_1" }] }
      })
      expect(stored.body.events.map((e: { request_id: string; status: string }) => `${e.request_id}:${e.status}`))
        .toEqual([
          "evt_2:confirmed",
          "evt_3:shipped",
          "evt_1:created"
        ])
      const list = yield* get("/agentic_checkout/orders")
      expect(list.body).toEqual({
        data: [{ order_id: "ord_1", status: "shipped", updated_at: "2026-01-01T00:00:01.000Z" }]
      })
    })))

  it.effect("the read routes need the bearer key; an unknown order is 404", () =>
    run(Effect.gen(function*() {
      expect((yield* get("/agentic_checkout/orders", { auth: false })).status).toBe(401)
      const missing = yield* get("/agentic_checkout/orders/ord_nope")
      expect(missing.status).toBe(404)
      expect(missing.body.code).toBe("not_found")
    })))

  it.effect("a flood past the budget is turned away in process: only the budget reaches the shared limiter", () => {
    let sharedCalls = 0
    const counting = Layer.effect(
      RateLimiter,
      Effect.map(makeInProcessRateLimiter(), (inner) => ({
        ...inner,
        consume: (key: string, options: BucketOptions) =>
          Effect.zipRight(Effect.sync(() => sharedCalls++), inner.consume(key, options))
      }))
    )
    return run(
      Effect.gen(function*() {
        const statuses: Array<number> = []
        for (let i = 0; i < 10; i++) statuses.push((yield* deliver("{}", { requestId: `evt_flood_${i}` })).status)
        expect(statuses.filter((s) => s === 429)).toHaveLength(8)
        expect(sharedCalls).toBe(2)
      }),
      testApp({
        payments: UnusedPaymentProvider,
        config: { webhookReceiverRateLimitPerMinute: 2 },
        rateLimiter: counting
      })
    )
  })

  it.effect("rate limited per source: 429 too_many_requests with Retry-After", () =>
    run(
      Effect.gen(function*() {
        const body = eventBody("order_create", "created")
        expect((yield* deliver(body, { requestId: "evt_a" })).status).toBe(200)
        expect((yield* deliver(body, { requestId: "evt_b" })).status).toBe(200)
        const limited = yield* deliver(body, { requestId: "evt_c" })
        expect(limited.status).toBe(429)
        expect(limited.body).toMatchObject({ type: "invalid_request", code: "too_many_requests" })
        expect(limited.headers.get("retry-after")).toBe("30")
        yield* TestClock.adjust("30 seconds")
        expect((yield* deliver(body, { requestId: "evt_c", t: NOW_SECONDS + 30 })).status).toBe(200)
      }),
      app({ webhookReceiverRateLimitPerMinute: 2 })
    ))

  it.effect("without the webhook_receiver role the receiver routes do not exist (404)", () =>
    run(
      Effect.gen(function*() {
        expect((yield* deliver(eventBody("order_create", "created"))).status).toBe(404)
        expect((yield* get("/agentic_checkout/orders")).status).toBe(404)
      }),
      app({ roles: new Set(ALL_ROLES.filter((role) => role !== "webhook_receiver")) })
    ))
})
