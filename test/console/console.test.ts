/**
 * The merchant console over HTTP, as a browser uses it (`test/support/console-client.ts`): the
 * pages of each role, the order actions through the same services as the API, and every refusal —
 * no session, no or a wrong CSRF token, another site's form, a changed order. Signing in and out:
 * `console-sign-in.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import type { Role } from "../../src/platform/config.ts"
import { SqlReceivedEventsStore } from "../../src/webhook-receiver/store/sql-received-events-store.ts"
import { hiddenField, makeConsoleClient, signedInConsole } from "../support/console-client.ts"
import { get, post, request, testApp } from "../support/http.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { paidOrder } from "../support/three-d-secure.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, roles?: ReadonlyArray<Role>) =>
  Effect.provide(effect, testApp(roles === undefined ? {} : { config: { roles: new Set(roles) } })) as Effect.Effect<
    A,
    E,
    never
  >

const orderStatus = (id: string) => Effect.map(get(`/orders/${id}`), (response) => response.body)

/** The order's console page, and the tag its forms carry. */
const orderPage = (client: Effect.Effect.Success<typeof makeConsoleClient>, id: string) =>
  Effect.map(client.get(`/console/orders/${id}`), (page) => ({ page, seen: hiddenField(page.text, "seen")! }))

describe("orders in the console", () => {
  it.effect("lists orders, filtered by status and found by order or session id", () =>
    run(Effect.gen(function*() {
      const first = yield* paidOrder()
      const second = yield* paidOrder([{ id: "mug-ceramic", quantity: 1 }])
      yield* post(`/orders/${second.id}/confirm`)
      const client = yield* signedInConsole()
      const all = (yield* client.get("/console/orders")).text
      expect(all).toContain(first.id)
      expect(all).toContain(second.id)
      const confirmed = (yield* client.get("/console/orders?status=confirmed")).text
      expect(confirmed).toContain(second.id)
      expect(confirmed).not.toContain(first.id)
      const bySession = (yield* client.get(`/console/orders?q=${first.checkout_session_id}`)).text
      expect(bySession).toContain(first.id)
      expect(bySession).not.toContain(second.id)
      expect((yield* client.get("/console/orders?q=ord_nothing")).text).toContain("No orders match.")
    })))

  it.effect("an action or a notice named like a property of every object is no action and no notice", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const before = (yield* orderStatus(order.id)).status
      const client = yield* signedInConsole()
      const { seen } = yield* orderPage(client, order.id)
      const unknown = yield* client.post(`/console/orders/${order.id}/constructor`, { seen })
      expect(unknown.status).toBe(404)
      expect(unknown.text).toContain("No action constructor.")
      const page = yield* client.get(`/console/orders/${order.id}?done=constructor`)
      expect(page.status).toBe(200)
      expect(page.text).not.toContain("function Object")
      expect((yield* orderStatus(order.id)).status).toBe(before)
    })))

  it.effect("confirm, ship with tracking, refund and fulfill go through the order service and queue order_update", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const client = yield* signedInConsole()
      let { seen } = yield* orderPage(client, order.id)
      const confirmed = yield* client.post(`/console/orders/${order.id}/confirm`, { seen })
      expect(confirmed.status).toBe(303)
      expect(confirmed.headers.get("location")).toBe(`/console/orders/${order.id}?done=confirm`)
      expect((yield* client.get(confirmed.headers.get("location")!)).text).toContain("Order confirmed.")
      expect((yield* orderStatus(order.id)).status).toBe("confirmed")

      seen = (yield* orderPage(client, order.id)).seen
      const shipped = yield* client.post(`/console/orders/${order.id}/ship`, {
        seen,
        carrier: "UPS",
        tracking_number: "1Z999AA10123456784",
        tracking_url: "https://ups.example/track/1Z999AA10123456784"
      })
      expect(shipped.status).toBe(303)
      const body = yield* orderStatus(order.id)
      expect(body.status).toBe("shipped")
      expect(body.fulfillments[0]).toMatchObject({ carrier: "UPS", tracking_number: "1Z999AA10123456784" })

      seen = (yield* orderPage(client, order.id)).seen
      expect(
        (yield* client.post(`/console/orders/${order.id}/refund`, { seen, amount: "5.5", type: "store_credit" })).status
      )
        .toBe(303)
      expect((yield* orderStatus(order.id)).refunds).toEqual([{ type: "store_credit", amount: 550 }])

      seen = (yield* orderPage(client, order.id)).seen
      expect((yield* client.post(`/console/orders/${order.id}/fulfill`, { seen })).status).toBe(303)
      expect((yield* orderStatus(order.id)).status).toBe("fulfilled")
      const events = yield* Effect.flatMap(OrderStore, (store) => store.listEvents({ orderId: order.id, limit: 10 }))
      expect(events.map((event) => event.type)).toEqual([
        "order_update",
        "order_update",
        "order_update",
        "order_update",
        "order_create"
      ])
    })))

  it.effect("a second click of the same form is refused: one refund, not two", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      yield* post(`/orders/${order.id}/confirm`)
      const client = yield* signedInConsole()
      const { seen } = yield* orderPage(client, order.id)
      expect(
        (yield* client.post(`/console/orders/${order.id}/refund`, { seen, amount: "1", type: "original_payment" }))
          .status
      )
        .toBe(303)
      const again = yield* client.post(`/console/orders/${order.id}/refund`, {
        seen,
        amount: "1",
        type: "original_payment"
      })
      expect(again.status).toBe(409)
      expect(again.text).toContain("The order changed since the page was shown; nothing was done.")
      expect((yield* orderStatus(order.id)).refunds).toEqual([{ type: "original_payment", amount: 100 }])
    })))

  it.effect("what the order's status or the form does not allow is refused with a reason, and nothing changes", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const client = yield* signedInConsole()
      const { seen } = yield* orderPage(client, order.id)
      const fulfill = yield* client.post(`/console/orders/${order.id}/fulfill`, { seen })
      expect(fulfill.status).toBe(409)
      expect(fulfill.text).toContain("The order is created and cannot become fulfilled.")
      const refund = yield* client.post(`/console/orders/${order.id}/refund`, {
        seen,
        amount: "1",
        type: "store_credit"
      })
      expect(refund.status).toBe(409)
      yield* post(`/orders/${order.id}/confirm`)
      const now = (yield* orderPage(client, order.id)).seen
      for (const amount of ["0", "-1", "1.234", "abc", ""]) {
        const bad = yield* client.post(`/console/orders/${order.id}/refund`, {
          seen: now,
          amount,
          type: "store_credit"
        })
        expect(bad.status).toBe(400)
      }
      const tooMuch = yield* client.post(`/console/orders/${order.id}/refund`, {
        seen: now,
        amount: "100000",
        type: "store_credit"
      })
      expect(tooMuch.status).toBe(422)
      const noTracking = yield* client.post(`/console/orders/${order.id}/ship`, { seen: now, carrier: "UPS" })
      expect(noTracking.status).toBe(400)
      const nul = yield* client.post(`/console/orders/${order.id}/ship`, {
        seen: now,
        carrier: "U\u0000PS",
        tracking_number: "1"
      })
      expect(nul.status).toBe(400)
      expect((yield* client.post(`/console/orders/${order.id}/explode`, { seen: now })).status).toBe(404)
      expect((yield* client.get("/console/orders/ord_missing")).status).toBe(404)
      const body = yield* orderStatus(order.id)
      expect(body.status).toBe("confirmed")
      expect(body.refunds).toEqual([])
    })))

  it.effect("a new buyer link replaces the permalink everywhere; the old link is a 404", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const oldPath = new URL(order.permalink_url).pathname
      expect((yield* request("GET", oldPath, { auth: false, version: false })).status).toBe(200)
      const client = yield* signedInConsole()
      const { seen } = yield* orderPage(client, order.id)
      const made = yield* client.post(`/console/orders/${order.id}/new-buyer-link`, { seen })
      expect(made.status).toBe(303)
      const fresh = (yield* orderStatus(order.id)).permalink_url as string
      expect(fresh).not.toBe(order.permalink_url)
      expect((yield* request("GET", oldPath, { auth: false, version: false })).status).toBe(404)
      expect((yield* request("GET", new URL(fresh).pathname, { auth: false, version: false })).status).toBe(200)
      const session = yield* Effect.flatMap(CheckoutStore, (store) => store.sessions.get(order.checkout_session_id))
      expect(Option.getOrThrow(session).order?.permalink_url).toBe(fresh)
      const [latest] = yield* Effect.flatMap(OrderStore, (store) => store.listEvents({ orderId: order.id, limit: 1 }))
      expect(latest!.payload.data.permalink_url).toBe(fresh)
    })))

  it.effect("a second post of the same new-buyer-link form is refused: the link sent to the agent stays", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const client = yield* signedInConsole()
      const { seen } = yield* orderPage(client, order.id)
      expect((yield* client.post(`/console/orders/${order.id}/new-buyer-link`, { seen })).status).toBe(303)
      const sent = (yield* orderStatus(order.id)).permalink_url as string
      const again = yield* client.post(`/console/orders/${order.id}/new-buyer-link`, { seen })
      expect(again.status).toBe(409)
      expect(again.text).toContain("The order changed since the page was shown; nothing was done.")
      expect((yield* orderStatus(order.id)).permalink_url).toBe(sent)
      expect((yield* request("GET", new URL(sent).pathname, { auth: false, version: false })).status).toBe(200)
      // Without the page's tag, or after a change made through the API, nothing is made either.
      expect((yield* client.post(`/console/orders/${order.id}/new-buyer-link`, {})).status).toBe(409)
      const shown = (yield* orderPage(client, order.id)).seen
      yield* post(`/orders/${order.id}/confirm`)
      expect((yield* client.post(`/console/orders/${order.id}/new-buyer-link`, { seen: shown })).status).toBe(409)
      const events = yield* Effect.flatMap(OrderStore, (store) => store.listEvents({ orderId: order.id, limit: 10 }))
      expect(events.map((event) => event.type)).toEqual(["order_update", "order_update", "order_create"])
      expect((yield* orderStatus(order.id)).permalink_url).toBe(sent)
    })))
})

describe("ids no store can hold", () => {
  it.effect("are no record on a SQL store (404, an empty list), never a storage failure", () => {
    const database = hasPostgres ? postgresDatabase() : embeddedDatabase()
    return Effect.provide(
      Effect.gen(function*() {
        const client = yield* signedInConsole()
        expect((yield* client.get("/console/orders/%00")).status).toBe(404)
        expect((yield* client.get("/console/orders/%00")).text).toContain("Order not found")
        expect((yield* client.post("/console/orders/%00/confirm", { seen: "x" })).status).toBe(404)
        expect((yield* client.get("/console/orders?q=%00")).text).toContain("No orders match.")
        expect((yield* client.get("/console/received/%00")).text).toContain("No events for this order.")
        expect((yield* client.post("/console/deliveries/%00/redrive", {})).status).toBe(409)
      }),
      testApp({
        orderStore: Layer.provide(SqlOrderStore, database),
        receivedEventsStore: Layer.provide(SqlReceivedEventsStore, database)
      })
    )
  }, { timeout: 60_000 })
})

describe("forms the console refuses", () => {
  it.effect("without a session, without the CSRF token, with another token, or from another site", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const client = yield* signedInConsole()
      const { seen } = yield* orderPage(client, order.id)
      const path = `/console/orders/${order.id}/cancel`
      const anonymous = yield* makeConsoleClient
      expect((yield* anonymous.post(path, { seen })).status).toBe(403)
      const missing = yield* client.post(path, { seen, csrf_token: "" })
      expect(missing.status).toBe(403)
      expect(missing.text).toContain("nothing was done")
      expect((yield* client.post(path, { seen, csrf_token: "A".repeat(22) })).status).toBe(403)
      expect((yield* client.post(path, { seen }, { "sec-fetch-site": "cross-site" })).status).toBe(403)
      expect((yield* client.post(path, { seen }, { "sec-fetch-site": "same-site" })).status).toBe(403)
      // Another session's token is not this one's.
      const other = yield* signedInConsole()
      yield* other.get("/console/orders")
      expect((yield* client.post(path, { seen, csrf_token: (yield* other.csrfToken)! })).status).toBe(403)
      const json = yield* request("POST", path, {
        auth: false,
        version: false,
        body: { seen },
        headers: { cookie: `acp_console=${(yield* client.cookies).get("acp_console")}` }
      })
      expect(json.status).toBe(400)
      expect((yield* orderStatus(order.id)).status).toBe("created")
      expect((yield* client.post(path, { seen })).status).toBe(303)
      expect((yield* orderStatus(order.id)).status).toBe("canceled")
    })))
})

describe("the other pages", () => {
  it.effect("deliveries: counts per state, a dead event redriven", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const store = yield* OrderStore
      const [claimed] = yield* store.claimDue(0, 1, 60_000)
      yield* store.finishAttempts([{
        id: claimed!.id,
        attempt: claimed!.attempts,
        result: { state: "dead", nextAttemptAt: 0, lastStatus: 500, lastError: "HTTP 500", at: 0 }
      }])
      const client = yield* signedInConsole()
      const dead = yield* client.get("/console/deliveries?state=dead")
      expect(dead.text).toContain("dead: 1")
      expect(dead.text).toContain(claimed!.id)
      expect(dead.text).toContain(order.id)
      const redriven = yield* client.post(`/console/deliveries/${claimed!.id}/redrive`, {})
      expect(redriven.status).toBe(303)
      expect(Option.getOrThrow(yield* store.getEvent(claimed!.id)).state).toBe("pending")
      const again = yield* client.post(`/console/deliveries/${claimed!.id}/redrive`, {})
      expect(again.status).toBe(409)
    })))

  it.effect("stock levels with titles; checkout sessions with their buyers and orders", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      const client = yield* signedInConsole()
      const stock = (yield* client.get("/console/stock")).text
      expect(stock).toMatch(/Classic Cotton T-Shirt<\/td>\s*<td class="opt">tshirt-classic<\/td><td class="n">98<\/td>/)
      const sessions = (yield* client.get("/console/sessions?status=completed")).text
      expect(sessions).toContain(order.checkout_session_id)
      expect(sessions).toContain("Ada Lovelace")
      expect(sessions).toContain(`/console/orders/${order.id}`)
      expect((yield* client.get("/console/sessions?status=canceled")).text).toContain("No checkout sessions canceled.")
    })))

  it.effect("a buyer named like markup is shown as text on every page", () =>
    run(Effect.gen(function*() {
      const name = "<img src=x onerror=alert(1)>"
      const order = yield* paidOrder(undefined, { first_name: name, last_name: "\"'&", email: "x@example.com" })
      const client = yield* signedInConsole()
      for (const path of [`/console/orders/${order.id}`, "/console/sessions"]) {
        const page = (yield* client.get(path)).text
        expect(page).not.toContain("<img")
        expect(page).toContain("&lt;img src=x onerror=alert(1)&gt; &quot;&#39;&amp;")
      }
    })))

  it.effect("each page only with its roles: a receiver-only process shows received events and nothing else", () =>
    run(
      Effect.gen(function*() {
        const client = yield* signedInConsole()
        const home = yield* client.get("/console")
        expect(home.headers.get("location")).toBe("/console/received")
        const page = (yield* client.get("/console/received")).text
        expect(page).toContain("No order events received yet.")
        expect(page).not.toContain("/console/orders")
        expect((yield* client.get("/console/orders")).status).toBe(404)
        expect((yield* client.get("/console/stock")).status).toBe(404)
      }),
      ["webhook_receiver"]
    ))

  it.effect("a process with no role the console shows has no console", () =>
    run(
      Effect.map(request("GET", "/console/sign-in", { auth: false, version: false }), (page) =>
        expect(page.status).toBe(404)),
      ["delegate"]
    ))
})
