/**
 * Hostile and random JSON to every POST route: never a 5xx, every 4xx an error object
 * `{type, code, message}`, and a refused request changes nothing stored (idempotency records
 * aside: a 4xx to a keyed request is kept for replay by design). The bodies: arbitrary JSON
 * (unicode text included), valid requests with arbitrary extra or repeated fields (`__proto__`,
 * duplicate keys), nesting around and far beyond `MAX_JSON_DEPTH`, wide values, huge and tiny
 * numbers, lone surrogates and NUL, and text that is not JSON. Order events are signed correctly,
 * so their bodies reach the parser.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Runtime, TestClock } from "effect"
import fc from "fast-check"
import { randomBytes } from "node:crypto"
import { MAX_BODY_BYTES } from "../../src/platform/http/request-body-bytes.ts"
import { signPayload } from "../../src/shared/hmac-signature.ts"
import { MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { cancelRequest, createRequest, idempotencyKey } from "../support/acp-fixtures.ts"
import { DELEGATE_PATH, NOW, validDelegateRequest } from "../support/delegate.ts"
import {
  address,
  buyer,
  createReadySession,
  paymentData,
  request,
  testApp,
  type TestResponse
} from "../support/http.ts"
import { memoryStore, storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"
import { createOrder } from "../support/webhooks.ts"

interface Route {
  readonly name: string
  readonly path: string
  readonly version: string | false
  /** Sent with a fresh Idempotency-Key (2026-04-17 requires one). */
  readonly keyed: boolean
  /** Signed as the merchant signs order events (no bearer). */
  readonly signed: boolean
  /** A valid body, for the arbitraries that add to one. */
  readonly valid: Record<string, unknown>
}

const orderEvent = {
  type: "order_update",
  data: {
    type: "order",
    id: "ord_hostile",
    checkout_session_id: "cs_hostile",
    permalink_url: "https://merchant.test/orders/ord_hostile",
    status: "confirmed",
    refunds: []
  }
}

const routes = (sessionId: string, otherSessionId: string, orderId: string): ReadonlyArray<Route> => {
  const route = (name: string, path: string, version: string | false, valid: Record<string, unknown>) => ({
    name: `${name} (${version === false ? "no version" : version})`,
    path,
    version,
    keyed: version === "2026-04-17",
    signed: false,
    valid
  })
  const session = `/checkout_sessions/${sessionId}`
  const order = `/orders/${orderId}`
  return [
    route("create", "/checkout_sessions", "2025-09-29", {
      items: [{ id: "tshirt-classic", quantity: 1 }],
      buyer,
      fulfillment_address: address
    }),
    route("create", "/checkout_sessions", "2026-01-30", createRequest("2026-01-30")),
    route("create", "/checkout_sessions", "2026-04-17", createRequest("2026-04-17")),
    route("update", session, "2025-09-29", { buyer }),
    route("update", session, "2026-04-17", { buyer }),
    route("complete", `${session}/complete`, "2025-09-29", { payment_data: paymentData }),
    route("complete", `${session}/complete`, "2026-04-17", { buyer }),
    // 2025-09-29 ignores a well-formed cancel body: aimed at another session, so that it cancels only that one.
    route("cancel", `/checkout_sessions/${otherSessionId}/cancel`, "2025-09-29", {}),
    route("cancel", `${session}/cancel`, "2026-01-30", cancelRequest),
    route("cancel", `${session}/cancel`, "2026-04-17", cancelRequest),
    route("delegate", DELEGATE_PATH, "2025-09-29", validDelegateRequest()),
    route("delegate", DELEGATE_PATH, "2026-04-17", validDelegateRequest()),
    route("ship", `${order}/ship`, "2025-09-29", { carrier: "UPS", tracking_number: "1Z" }),
    route("refund", `${order}/refunds`, "2025-09-29", { type: "partial", amount: 1 }),
    route("confirm", `${order}/confirm`, "2025-09-29", {}),
    route("redrive", "/webhooks/deliveries/evt_unknown/redrive", "2025-09-29", {}),
    { ...route("order event", "/agentic_checkout/webhooks/order_events", false, orderEvent), signed: true }
  ]
}

const nested = (levels: number, open = "[", close = "]") => open.repeat(levels) + close.repeat(levels)

/** Hand-made texts: each goes to every route. */
const HOSTILE_TEXTS: ReadonlyArray<string> = [
  "",
  " ",
  "{",
  "nul",
  "NaN",
  "\ufeff{}",
  "{}",
  "[]",
  "null",
  "\"text\"",
  "1e400",
  nested(MAX_JSON_DEPTH),
  nested(MAX_JSON_DEPTH + 1),
  nested(100_000),
  nested(500_000),
  // One byte over the size bound: 413 before anything is parsed.
  " ".repeat(MAX_BODY_BYTES - 1) + "{}",
  "{\"a\":".repeat(150_000) + "1" + "}".repeat(150_000),
  `[${"0,".repeat(300_000)}0]`,
  `{${Array.from({ length: 30_000 }, (_, i) => `"k${i}":${i}`).join(",")}}`,
  "{\"items\":[{\"id\":\"tshirt-classic\",\"quantity\":1e400}],\"line_items\":[{\"id\":\"tshirt-classic\",\"quantity\":-1e400}]}",
  "{\"items\":[{\"id\":\"tshirt-classic\",\"quantity\":123456789012345678901234567890}],\"amount\":1e-400,\"type\":\"full\"}",
  "{\"__proto__\":{\"items\":[],\"admin\":true},\"constructor\":{\"prototype\":{\"polluted\":1}}}",
  "{\"items\":[],\"items\":[{\"id\":\"tshirt-classic\",\"quantity\":1}],\"items\":null}",
  "{\"buyer\":{\"first_name\":\"\\ud800\",\"email\":\"a\\u0000@example.com\"},\"\\udfff\":1}",
  "{\"buyer\":{\"first_name\":\"Zoë 👩‍👩‍👧 ﷽ \\u202e\",\"last_name\":\"\\u0301\",\"email\":\"ü@例え.jp\"}}",
  JSON.stringify({ type: "order_create", data: { ...orderEvent.data, extra: [] } })
    .replace("\"extra\":[]", `"extra":${nested(5_000)}`)
]

/** Object text with `entries` in order, repeated keys kept (so `__proto__` stays a key). */
const objectText = (entries: ReadonlyArray<readonly [string, unknown]>) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`

const key = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.constantFrom("__proto__", "constructor", "prototype", "toJSON", "items", "line_items", "quantity", "type", "data")
)

const anyJson = fc.jsonValue({ stringUnit: "binary", maxDepth: 6 })

/** Arrays and objects alternately, `levels` deep, around the bound. */
const deepValue = fc.integer({ min: MAX_JSON_DEPTH - 2, max: MAX_JSON_DEPTH + 3 }).map((levels) => {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { v: value }
  return value
})

/** A body for `route`: a text built from its valid body, or any JSON, or any text. */
const bodyFor = (route: Route): fc.Arbitrary<string> =>
  fc.oneof(
    anyJson.map((value) => JSON.stringify(value)),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.constantFrom(...HOSTILE_TEXTS.filter((text) => text.length < 10_000)),
    // The valid body with extra or repeated fields (later ones win in JSON.parse).
    fc.array(fc.tuple(key, fc.oneof(anyJson, deepValue)), { maxLength: 4 }).map((extra) =>
      objectText([...Object.entries(route.valid), ...extra])
    ),
    // The valid body with one of its fields replaced by anything.
    fc.tuple(fc.nat(), fc.oneof(anyJson, deepValue)).map(([index, value]) => {
      const entries = Object.entries(route.valid)
      if (entries.length === 0) return objectText([["x", value]])
      const at = index % entries.length
      return objectText(entries.map(([k, v], i) => [k, i === at ? value : v] as const))
    })
  )

const send = (route: Route, body: string) =>
  request("POST", route.path, {
    body,
    ...(route.signed ? { auth: false } : {}),
    version: route.version,
    headers: {
      ...(route.keyed ? { "idempotency-key": idempotencyKey() } : {}),
      ...(route.signed ? { "merchant-signature": signPayload("whsec_test", Math.floor(NOW / 1000), body) } : {})
    }
  })

/** The properties of one answer; a refused request left `before` as it was (`state` now). */
const checkAnswer = (
  route: Route,
  body: string,
  response: TestResponse,
  before: unknown,
  state: Effect.Effect<unknown, never, any>
) =>
  Effect.gen(function*() {
    const what = `${route.name} ← ${body.length > 200 ? `${body.slice(0, 200)}… (${body.length} chars)` : body}`
    expect(response.status, `${what}: ${response.text.slice(0, 300)}`).toBeLessThan(500)
    if (response.status >= 400) {
      expect(response.body, what).toEqual(
        expect.objectContaining({ type: expect.any(String), code: expect.any(String), message: expect.any(String) })
      )
      if ("param" in response.body) expect(response.body.param, what).toEqual(expect.any(String))
      expect(yield* state, what).toEqual(before)
    }
  })

/** Sessions and an order to aim the routes at. */
const targets = Effect.gen(function*() {
  const session = yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])
  const other = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
  const order = yield* createOrder()
  return routes(session.id, other.id, order.id)
})

/**
 * On each store: memory (1000 random bodies), SQL on embedded PGlite and on PostgreSQL (fewer:
 * each request there costs real statements), where the received events, orders and sessions are
 * written by the SQL stores (one of them once failed re-serializing what it was given).
 */
const hostileSuite = (kind: StoreUnderTest, numRuns: number) => {
  const sendAndCheck = (route: Route, body: string) =>
    Effect.gen(function*() {
      const before = yield* kind.state
      const response = yield* send(route, body)
      yield* checkAnswer(route, body, response, before, kind.state)
    })

  const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
    Effect.flatMap(kind.freshStores, (stores) =>
      Effect.provide(
        Effect.zipRight(TestClock.setTime(NOW), effect),
        Layer.merge(
          testApp({
            ...stores,
            config: { delegateRateLimitPerMinute: 1_000_000, webhookReceiverRateLimitPerMinute: 1_000_000 }
          }),
          freshMemoryDatabase
        )
      )) as Effect.Effect<A, E, never>

  describe(`hostile JSON to every POST route: ${kind.name}`, () => {
    if (!kind.available) {
      it.skip("needs TEST_DATABASE_URL", () => {})
      return
    }
    kind.register()

    it.effect(
      "each hand-made hostile text: no 5xx, an error object on every 4xx, nothing changed when refused",
      () =>
        run(Effect.gen(function*() {
          const all = yield* targets
          // The snapshot sees what is stored (the sessions aimed at), so an unchanged one means something.
          expect(JSON.stringify(yield* kind.state)).toContain(all[3]!.path.split("/")[2])
          for (const route of all) {
            for (const body of HOSTILE_TEXTS) yield* sendAndCheck(route, body)
          }
        })),
      { timeout: 120_000 }
    )

    it.effect(
      "hostile ids in paths, with an Idempotency-Key: too long for any route, or text storage cannot hold",
      () =>
        run(Effect.gen(function*() {
          // Random, so that PostgreSQL cannot compress it under its index row limit.
          const long = randomBytes(1500).toString("hex")
          const cases = [
            ["POST", `/checkout_sessions/${long}`, "2025-09-29"],
            ["POST", `/checkout_sessions/${long}/complete`, "2026-04-17"],
            ["POST", `/orders/${long}/confirm`, "2025-09-29"],
            ["POST", "/delegate_authentication/authn_x%00/authenticate", "2026-04-17"],
            ["GET", "/delegate_authentication/authn_x%00", "2026-04-17"],
            ["POST", "/checkout_sessions/cs_x%00/cancel", "2026-04-17"]
          ] as const
          for (const [method, path, version] of cases) {
            const before = yield* kind.state
            const response = yield* request(method, path, {
              ...(method === "POST" ? { body: JSON.stringify({ fingerprint_completion: "Y" }) } : {}),
              version,
              headers: { "idempotency-key": idempotencyKey() }
            })
            const what = `${method} ${path.slice(0, 80)}`
            expect(response.status, `${what}: ${response.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400)
            expect(response.status, `${what}: ${response.text.slice(0, 300)}`).toBeLessThan(500)
            expect(yield* kind.state, what).toEqual(before)
          }
        })),
      { timeout: 120_000 }
    )

    it.effect(
      "random bodies (property): no 5xx, an error object on every 4xx, nothing changed when refused",
      () =>
        run(Effect.gen(function*() {
          const all = yield* targets
          const runtime = yield* Effect.runtime<any>()
          const cases = fc.constantFrom(...all).chain((route) => fc.tuple(fc.constant(route), bodyFor(route)))
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(cases, ([route, body]) => Runtime.runPromise(runtime)(sendAndCheck(route, body))),
              { numRuns }
            )
          )
        })),
      { timeout: 120_000 }
    )
  })
}

for (const kind of storesUnderTest) hostileSuite(kind, kind === memoryStore ? 1000 : 300)
