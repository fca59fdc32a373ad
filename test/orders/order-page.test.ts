/**
 * The buyer's order page behind `permalink_url`, through HTTP: no API key, the order's status and
 * history, items, totals, shipments and refunds, JSON when asked, a 404 page for any other link,
 * headers that keep the capability URL private, every value escaped, and no card data.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Catalog, fixedCatalog } from "../../src/catalog/catalog-service.ts"
import { ALL_ROLES } from "../../src/platform/config.ts"
import { demoCatalogTitling } from "../support/fixtures.ts"
import { get, post, request, testApp, type TestAppOptions } from "../support/http.ts"
import { paidOrder, PLAIN_CARD } from "../support/three-d-secure.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, testApp(options)) as Effect.Effect<A, E, never>

const pathOf = (url: string) => new URL(url).pathname
const openPage = (url: string, accept = "text/html") =>
  request("GET", pathOf(url), { auth: false, version: false, headers: { accept } })

describe("the buyer's order page", () => {
  it.effect("permalink_url opens the order without an API key: status, items, totals", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      expect(order.permalink_url).toMatch(/^https:\/\/merchant\.test\/order-status\/[0-9A-Za-z]{22}$/)
      expect(order.permalink_url).not.toContain(order.id)
      const page = yield* openPage(order.permalink_url)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.text).toContain(order.id)
      expect(page.text).toContain("Order placed")
      expect(page.text).toContain("Classic Cotton T-Shirt")
      expect(page.text).toMatch(/<th scope="row">Total<\/th><td class="n">\d+\.\d\d USD<\/td>/)
      expect(page.text).toContain("<html lang=\"en\">")
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(page.headers.get("cache-control")).toBe("no-store")
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      expect(page.text).not.toContain(PLAIN_CARD)
      expect(page.text).not.toContain(PLAIN_CARD.slice(-4).padStart(8, "•"))
    })))

  it.effect("the merchant's changes show: confirmed, shipped with carrier and tracking, refunded, with the history", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      expect((yield* post(`/orders/${order.id}/confirm`, {})).status).toBe(200)
      const shipped = yield* post(`/orders/${order.id}/ship`, {
        carrier: "UPS",
        tracking_number: "1Z999AA10123456784",
        tracking_url: "https://www.ups.com/track?tracknum=1Z999AA10123456784"
      })
      expect(shipped.status, shipped.text).toBe(200)
      const refunded = yield* post(`/orders/${order.id}/refunds`, { type: "original_payment", amount: 500 })
      expect(refunded.status, refunded.text).toBe(200)
      const page = yield* openPage(order.permalink_url)
      expect(page.text).toContain("Shipped")
      expect(page.text).toContain("UPS")
      expect(page.text).toContain(
        "<a href=\"https://www.ups.com/track?tracknum=1Z999AA10123456784\" rel=\"noopener noreferrer\">1Z999AA10123456784</a>"
      )
      expect(page.text).toContain("5.00 USD to the original payment")
      const history = [...page.text.matchAll(/<li>(Order placed|Confirmed|Shipped|Delivered|Canceled) · /g)].map((m) =>
        m[1]
      )
      expect(history).toEqual(["Order placed", "Confirmed", "Shipped"])
      const json = yield* openPage(order.permalink_url, "application/json")
      expect(json.headers.get("content-type")).toContain("application/json")
      expect(json.body.order.id).toBe(order.id)
      expect(json.body.order.status).toBe("shipped")
      expect(json.body.status_history.map((change: { status: string }) => change.status)).toEqual([
        "created",
        "confirmed",
        "shipped"
      ])
      expect(json.body.currency).toBe("usd")
    })))

  it.effect("an unknown, malformed or bare-id link is a 404 page (JSON when asked)", () =>
    run(Effect.gen(function*() {
      const order = yield* paidOrder()
      for (const token of ["0123456789abcdefABCDEF", "short", order.id]) {
        const page = yield* request("GET", `/order-status/${token}`, { auth: false, version: false })
        expect(page.status, token).toBe(404)
        expect(page.text).toContain("Order not found")
        expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      }
      const json = yield* request("GET", "/order-status/0123456789abcdefABCDEF", {
        auth: false,
        version: false,
        headers: { accept: "application/json" }
      })
      expect(json.status).toBe(404)
      expect(json.body.code).toBe("not_found")
      // The merchant's order route still wants its key.
      expect((yield* get(`/orders/${order.id}`, { auth: false })).status).toBe(401)
    })))

  it.effect("catalog and merchant values are escaped: a product named <img src=x onerror=alert(1)> is text", () => {
    const catalog = demoCatalogTitling("tshirt-classic", "<img src=x onerror=alert(1)>")
    return run(
      Effect.gen(function*() {
        const order = yield* paidOrder()
        yield* post(`/orders/${order.id}/confirm`, {})
        yield* post(`/orders/${order.id}/ship`, { carrier: "<script>alert(2)</script>", tracking_number: "\"><b>x" })
        const page = yield* openPage(order.permalink_url)
        expect(page.text).toContain("&lt;img src=x onerror=alert(1)&gt;")
        expect(page.text).toContain("&lt;script&gt;alert(2)&lt;/script&gt;")
        expect(page.text).toContain("&quot;&gt;&lt;b&gt;x")
        expect(page.text).not.toContain("<img")
        expect(page.text).not.toContain("<script")
      }),
      { catalog: Layer.succeed(Catalog, fixedCatalog(catalog)) }
    )
  })

  it.effect("without the checkout role there is no page", () =>
    run(
      Effect.gen(function*() {
        const page = yield* request("GET", "/order-status/0123456789abcdefABCDEF", { auth: false, version: false })
        expect(page.status).toBe(404)
        expect(page.headers.get("content-type")).toContain("application/json")
      }),
      { config: { roles: new Set(ALL_ROLES.filter((role) => role !== "checkout")) } }
    ))
})
