/**
 * From a cart to an order over REST, as the RFC's lifecycle has it: the agent builds a cart, reads it,
 * creates a checkout session of its items (nothing cart-specific on the wire), and pays; and the buyer
 * page's form starts a checkout of the cart, which the cart then counts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CartStore } from "../../src/carts/cart-store.ts"
import { amountOf, clientOf, completeRequest, createRequest, updateRequest } from "../support/acp-fixtures.ts"
import { request } from "../support/http.ts"
import { getCart, newCart, NOW, quantityUpdate, runApp, updateCart } from "./cart-fixtures.ts"

const checkout = clientOf("2026-04-17")

/** The page of `continueUrl` (in process): its HTML, cookie and CSRF token. */
const openPage = (continueUrl: string) =>
  Effect.map(request("GET", new URL(continueUrl).pathname, { auth: false, version: false }), (page) => ({
    page,
    cookie: page.headers.get("set-cookie")!.split(";")[0]!,
    csrf: /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!
  }))

const postForm = (path: string, fields: Record<string, string>, headers: Record<string, string>) =>
  request("POST", path, {
    auth: false,
    version: false,
    body: new URLSearchParams(fields).toString(),
    contentType: "application/x-www-form-urlencoded",
    headers
  })

describe("cart → checkout → order", () => {
  it.effect("the agent's way: the cart's line items become the session's, the order is paid", () =>
    runApp(Effect.gen(function*() {
      const cart = yield* newCart()
      yield* updateCart(cart.id, quantityUpdate)
      const read = (yield* getCart(cart.id)).body
      const items = read.line_items.map((line: any) => ({ id: line.item.id, quantity: line.quantity }))
      const session = yield* checkout.created(createRequest("2026-04-17", { line_items: items, buyer: read.buyer }))
      expect(session.line_items.map((line: any) => [line.item.id, line.quantity])).toEqual([
        ["tshirt-classic", 3],
        ["hoodie-zip", 1]
      ])
      // The estimate's subtotal is the session's (the same line rule); the session adds tax and shipping.
      expect(amountOf(session.totals, "subtotal")).toBe(amountOf(read.totals, "subtotal"))
      const ready = (yield* checkout.update(
        session.id,
        updateRequest("2026-04-17", {
          selected_fulfillment_options: [
            { type: "shipping", option_id: "express", item_ids: ["tshirt-classic", "hoodie-zip"] }
          ]
        })
      )).body
      expect(ready.status).toBe("ready_for_payment")
      const token = yield* checkout.delegate(session.id, amountOf(ready.totals, "total")!)
      const paid = yield* checkout.complete(session.id, completeRequest("2026-04-17", token))
      expect(paid.status).toBe(200)
      expect(paid.body.status).toBe("completed")
      expect(paid.body.order.id).toMatch(/^ord_/)
      // The cart is the agent's to cancel or keep; paying does not touch it.
      expect((yield* getCart(cart.id)).status).toBe(200)
    })))

  it.effect("the buyer page: shows the cart escaped; its form starts one checkout, counted on the cart", () =>
    runApp(Effect.gen(function*() {
      const cart = yield* newCart({
        line_items: [{ id: "tshirt-classic", quantity: 2 }, { id: "<b>x</b>", quantity: 1 }]
      })
      const { cookie, csrf, page } = yield* openPage(cart.continue_url)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(page.headers.get("content-security-policy")).toContain("form-action 'self'")
      expect(page.headers.get("cache-control")).toBe("no-store")
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      expect(page.headers.get("x-robots-tag")).toBe("noindex")
      expect(cookie).toMatch(/^acp_cart_csrf=/)
      expect(page.headers.get("set-cookie")).toMatch(/HttpOnly/)
      expect(page.headers.get("set-cookie")).toMatch(/SameSite=Strict/)
      expect(page.text).toContain("Classic Cotton T-Shirt")
      expect(page.text).toContain("&lt;b&gt;x&lt;/b&gt;")
      expect(page.text).not.toContain("<b>x</b>")
      expect(page.text).not.toContain(cart.id)
      const path = `${new URL(cart.continue_url).pathname}/checkout`
      // Without the cookie's token, or from another site: refused, nothing started.
      expect((yield* postForm(path, { csrf_token: csrf }, {})).status).toBe(403)
      expect((yield* postForm(path, { csrf_token: "forged" }, { cookie })).status).toBe(403)
      const crossSite = yield* postForm(path, { csrf_token: csrf }, { cookie, "sec-fetch-site": "cross-site" })
      expect(crossSite.status).toBe(403)
      const store = yield* CartStore
      expect(Option.getOrThrow(yield* store.find(cart.id, NOW)).checkouts).toBe(0)
      // An item the catalog does not sell: the checkout cannot start; the page says so.
      const refused = yield* postForm(path, { csrf_token: csrf }, { cookie, "sec-fetch-site": "same-origin" })
      expect(refused.status).toBe(409)
      expect(refused.text).toContain("cannot be bought now")
      yield* updateCart(cart.id, { line_items: [{ id: "tshirt-classic", quantity: 2 }] })
      const started = yield* postForm(path, { csrf_token: csrf }, { cookie, "sec-fetch-site": "same-origin" })
      expect(started.status).toBe(200)
      expect(started.text).toContain("Classic Cotton T-Shirt")
      // The form's token is spent: the cookie is cleared, so the same form sent again is refused.
      expect(started.headers.get("set-cookie")).toMatch(/^acp_cart_csrf=; Max-Age=0/)
      const sessionId = /<strong>(cs_[0-9A-Za-z]+)<\/strong>/.exec(started.text)![1]!
      const session = (yield* checkout.get(sessionId)).body
      expect(session.line_items.map((line: any) => [line.item.id, line.quantity])).toEqual([["tshirt-classic", 2]])
      expect(Option.getOrThrow(yield* store.find(cart.id, NOW)).checkouts).toBe(1)
    })))

  it.effect("an unknown or malformed link is a 404 page; so is the link of a canceled cart", () =>
    runApp(Effect.gen(function*() {
      for (const path of ["/cart/AAAAAAAAAAAAAAAAAAAAAA", "/cart/x", "/cart/%3Cscript%3E"]) {
        const response = yield* request("GET", path, { auth: false, version: false })
        expect(response.status, path).toBe(404)
        expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
      }
      const cart = yield* newCart()
      yield* request("POST", `/carts/${cart.id}/cancel`, {
        version: "2026-04-17",
        body: {},
        headers: { "idempotency-key": "cancel-page" }
      })
      expect((yield* request("GET", new URL(cart.continue_url).pathname, { auth: false, version: false })).status)
        .toBe(404)
    })))
})
