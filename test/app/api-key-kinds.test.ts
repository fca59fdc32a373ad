/**
 * Agent keys (`API_KEYS`) and merchant keys (`MERCHANT_API_KEYS`) on every route of the assembled API:
 * each authenticated route takes one kind, a key of the other kind gets 403 in the route's error object
 * (`forbidden`, or the closed enum's code), an unknown key 401; a refused request is never kept under its
 * Idempotency-Key. Every route is classified here, so that a new one must be given its kind.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Api } from "../../src/app/api.ts"
import { MCP_PATH } from "../../src/mcp/http/handlers.ts"
import { declares, makeRouteTable, type Route } from "../../src/platform/http/route-table.ts"
import {
  AgentAuthorization,
  forbiddenMessage,
  type KeyKind,
  MerchantAuthorization
} from "../../src/platform/http/security.ts"
import { API_KEY, MERCHANT_API_KEY, post, request, testApp } from "../support/http.ts"
import { paidOrder } from "../support/three-d-secure.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, testApp()) as Effect.Effect<A, E, never>

const routes = makeRouteTable(Api).routes
const named = (route: Route) => `${route.method} ${route.path}`
const kindOf = (route: Route): KeyKind | undefined =>
  declares(route, AgentAuthorization) ? "agent" : declares(route, MerchantAuthorization) ? "merchant" : undefined

const MERCHANT_ROUTES = [
  "GET /orders/:order_id",
  "POST /orders/:order_id/confirm",
  "POST /orders/:order_id/hold",
  "POST /orders/:order_id/ship",
  "POST /orders/:order_id/fulfill",
  "POST /orders/:order_id/cancel",
  "POST /orders/:order_id/refunds",
  "GET /webhooks/deliveries",
  "POST /webhooks/deliveries/:event_id/redrive",
  "GET /webhooks/metrics",
  "GET /products",
  "POST /products",
  "GET /products/:product_id",
  "PUT /products/:product_id",
  "PATCH /products/:product_id/variants/:variant_id",
  "DELETE /products/:product_id",
  "GET /feed-publication",
  "POST /feed-publication/push",
  "POST /feed-publication/retry",
  "GET /feed-publication/products"
]

const AGENT_ROUTES = [
  "POST /checkout_sessions",
  "GET /checkout_sessions/:checkout_session_id",
  "POST /checkout_sessions/:checkout_session_id",
  "POST /checkout_sessions/:checkout_session_id/complete",
  "POST /checkout_sessions/:checkout_session_id/cancel",
  "POST /agentic_commerce/delegate_payment",
  "POST /delegate_authentication",
  "POST /delegate_authentication/:authentication_session_id/authenticate",
  "GET /delegate_authentication/:authentication_session_id",
  "GET /agentic_checkout/orders",
  "GET /agentic_checkout/orders/:order_id",
  "POST /feeds",
  "GET /feeds/:id",
  "GET /feeds/:id/products",
  "PATCH /feeds/:id/products",
  "POST /carts",
  "GET /carts/:id",
  "PUT /carts/:id",
  "POST /carts/:id/cancel",
  "POST /ucp/checkout-sessions",
  "GET /ucp/checkout-sessions/:id",
  "PUT /ucp/checkout-sessions/:id",
  "POST /ucp/checkout-sessions/:id/complete",
  "POST /ucp/checkout-sessions/:id/cancel"
]

/** A request to `route` with `key`, before anything about its path or body could matter. */
const call = (route: Route, key: string, version?: string) =>
  request(route.method, route.path.replace(/:(\w+)/g, "$1_x"), {
    auth: key,
    ...(version === undefined ? {} : { version }),
    ...(route.method === "POST" || route.method === "PATCH" || route.method === "PUT" ? { body: {} } : {})
  })

/** UCP's routes answer in UCP's shape. */
const isUcp = (route: Route) => route.path.startsWith("/ucp/")

/** The 403 in the error object of the route's group, for `version`. */
const forbiddenBody = (route: Route, version: string) => {
  const kind = kindOf(route)!
  if (isUcp(route)) return { code: "forbidden", content: forbiddenMessage(kind) }
  const closedEnum = route.group === "delegateAuthentication" ||
    (route.group === "delegate" && version !== "2025-09-29")
  return {
    type: "invalid_request",
    code: closedEnum ? "invalid_card" : "forbidden",
    message: forbiddenMessage(kind),
    ...(route.group === "delegate" && closedEnum ? { param: "$.headers['Authorization']" } : {})
  }
}

describe("the kind of key each route takes", () => {
  it("every route is classified: the merchant's, the agents', or one of no API key", () => {
    expect(routes.filter((route) => kindOf(route) === "merchant").map(named).sort()).toEqual(
      [...MERCHANT_ROUTES].sort()
    )
    expect(routes.filter((route) => kindOf(route) === "agent").map(named).sort()).toEqual([...AGENT_ROUTES].sort())
    const open = routes.filter((route) => kindOf(route) === undefined)
    // The webhook receivers (their signatures), discovery and health, the buyer's and issuer's pages, the console.
    for (const route of open) {
      expect(named(route)).toMatch(
        /^(POST \/agentic_checkout\/webhooks\/order_events|POST \/stripe\/webhooks|GET \/(healthz|readyz|\.well-known\/(acp\.json|ucp)|ucp\/handlers\/.*)|(GET|POST) \/(console|order-status|cart)\b.*|POST \/delegate_authentication\/:\w+\/acs\/\w+)$/
      )
    }
  })

  it.effect("an agent key on a merchant route: 403 forbidden, the order untouched", () =>
    run(Effect.gen(function*() {
      for (const route of routes.filter((route) => kindOf(route) === "merchant")) {
        const response = yield* call(route, API_KEY)
        expect(response.status, named(route)).toBe(403)
        expect(response.body, named(route)).toEqual(forbiddenBody(route, "2025-09-29"))
      }
      const order = yield* paidOrder()
      for (const action of ["confirm", "cancel"]) {
        expect((yield* post(`/orders/${order.id}/${action}`, undefined, { auth: API_KEY })).status).toBe(403)
      }
      const refund = { type: "original_payment", amount: 100 }
      expect((yield* post(`/orders/${order.id}/refunds`, refund, { auth: API_KEY })).status).toBe(403)
      const read = yield* request("GET", `/orders/${order.id}`, { auth: MERCHANT_API_KEY })
      expect(read.status).toBe(200)
      expect(read.body.refunds).toEqual([])
      expect(read.body.status).toBe("created")
    })))

  it.effect("a merchant key on an agent route: 403 in the route's error object, of every version", () =>
    run(Effect.gen(function*() {
      for (const route of routes.filter((route) => kindOf(route) === "agent")) {
        const versions = route.group === "delegate" ? ["2025-09-29", "2026-01-30", "2026-04-17"] : ["2025-09-29"]
        for (const version of versions) {
          const response = yield* call(route, MERCHANT_API_KEY, version)
          expect(response.status, `${named(route)} ${version}`).toBe(403)
          expect(response.body, `${named(route)} ${version}`).toEqual(forbiddenBody(route, version))
        }
      }
    })))

  it.effect("an unknown key on any authenticated route: 401, as without a key", () =>
    run(Effect.gen(function*() {
      for (const route of routes.filter((route) => kindOf(route) !== undefined)) {
        for (const key of ["sk_unknown", "mk_unknown", ""]) {
          const response = yield* call(route, key)
          expect(response.status, `${named(route)} ${key}`).toBe(401)
          if (isUcp(route)) expect(response.body.code, named(route)).toBe("unauthorized")
          else expect(response.body.type, named(route)).toBe("invalid_request")
        }
      }
    })))

  it.effect("MCP: a merchant key is refused 403 before any MCP message; an unknown one 401", () =>
    run(Effect.gen(function*() {
      const list = (auth: string) =>
        request("POST", MCP_PATH, {
          auth,
          version: false,
          headers: { accept: "application/json, text/event-stream" },
          body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
        })
      const merchant = yield* list(MERCHANT_API_KEY)
      expect(merchant.status).toBe(403)
      expect(merchant.body).toEqual({ type: "invalid_request", code: "forbidden", message: forbiddenMessage("agent") })
      expect(merchant.headers.get("www-authenticate")).toBeNull()
      const unknown = yield* list("mk_unknown")
      expect(unknown.status).toBe(401)
      expect(unknown.headers.get("www-authenticate")).toBe("Bearer")
      expect((yield* list(API_KEY)).status).toBe(200)
    })))
})

describe("idempotency keys of merchant routes", () => {
  it.effect("scoped to the merchant key; a request refused for its kind is not kept under its key", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      expect((yield* post(`/orders/${order.id}/confirm`)).status).toBe(200)
      const path = `/orders/${order.id}/refunds`
      const refund = { type: "original_payment", amount: 100 }
      const withKey = (auth: string) => ({ auth, headers: { "idempotency-key": "refund-1" } })
      expect((yield* post(path, refund, withKey(API_KEY))).status).toBe(403)
      const first = yield* post(path, refund, withKey(MERCHANT_API_KEY))
      expect(first.status).toBe(200)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      const again = yield* post(path, refund, withKey(MERCHANT_API_KEY))
      expect(again.status).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body.refunds).toHaveLength(1)
      // The agent key is still refused, not answered from the merchant key's record.
      expect((yield* post(path, refund, withKey(API_KEY))).status).toBe(403)
    })))
})
