/**
 * The console's products pages over HTTP, as a browser uses them (`test/support/console-client.ts`):
 * the list (search, availability, pages), a product's forms through the same `ProductStore` as the
 * Products API, the version the page showed (a stale form is refused, never applied), money typed as a
 * decimal becoming exact minor units, every invalid input shown on the page, and markup in a title shown
 * as text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ConsoleClient, hiddenField, makeConsoleClient, signedInConsole } from "../support/console-client.ts"
import { createReadySession, get, post, request, testApp } from "../support/http.ts"
import { paidOrder } from "../support/three-d-secure.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, testApp()) as Effect.Effect<A, E, never>

const SHIRT = "/console/products/tshirt-classic"
const SHIRT_VARIANT = `${SHIRT}/variants/tshirt-classic`

const apiProduct = (id: string) => Effect.map(get(`/products/${id}`), (response) => response.body)

/** The product's console page and what its forms carry: the version shown and the stock shown. */
const shown = (client: ConsoleClient, path = SHIRT) =>
  Effect.map(client.get(path), (page) => ({
    page,
    version: hiddenField(page.text, "version")!,
    stockSeen: hiddenField(page.text, "stock_seen")!
  }))

/** The variant form as the page filled it in, with `changes`. */
const postVariant = (client: ConsoleClient, changes: Record<string, string>, path = SHIRT) =>
  Effect.gen(function*() {
    const { stockSeen, version } = yield* shown(client, path)
    return yield* client.post(`${path}/variants/${path.split("/").at(-1)}`, {
      version,
      stock_seen: stockSeen,
      unit_amount: "25.00",
      list_amount: "",
      stock: stockSeen,
      availability: "in_stock",
      ...changes
    })
  })

describe("the console's products list", () => {
  it.effect("every product with its variants' price, list price, availability and stock; search and filter", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const page = yield* client.get("/console/products")
      expect(page.status).toBe(200)
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(page.text).toContain(`<a href="/console/products">Products</a>`)
      expect(page.text).toContain(`<a href="/console/feed">Product feed</a>`)
      expect(page.text).toContain("Classic Cotton T-Shirt")
      expect(page.text).toContain("25.00 USD")
      expect(page.text).toContain("Ceramic Coffee Mug, 12 oz")
      expect(page.text).toMatch(/in stock<\/span><\/td><td class="n">100<\/td><td class="n">0<\/td>/)

      const mugs = (yield* client.get("/console/products?q=MUG")).text
      expect(mugs).toContain("Ceramic Coffee Mug")
      expect(mugs).not.toContain("Classic Cotton T-Shirt")
      expect((yield* client.get("/console/products?q=nothing-like-it")).text).toContain("No products match.")

      const patched = yield* request("PATCH", "/products/mug-ceramic/variants/mug-ceramic", {
        body: { availability: "backorder", list_amount: 1800 }
      })
      expect(patched.status, patched.text).toBe(200)
      const backorder = (yield* client.get("/console/products?availability=backorder")).text
      expect(backorder).toContain("Ceramic Coffee Mug")
      expect(backorder).toContain("18.00 USD")
      expect(backorder).not.toContain("Classic Cotton T-Shirt")
      // An availability that is none is no filter.
      expect((yield* client.get("/console/products?availability=sold")).text).toContain("Classic Cotton T-Shirt")
    })))

  it.effect("pages of 25 products by id, the next one linked; archived products only when asked", () =>
    run(Effect.gen(function*() {
      for (let i = 0; i < 24; i++) {
        const id = `zz-${String(i).padStart(2, "0")}`
        const created = yield* post("/products", { id, title: `Extra ${id}`, variants: [{ id, unit_amount: 100 }] })
        expect(created.status, created.text).toBe(201)
      }
      const client = yield* signedInConsole()
      const first = (yield* client.get("/console/products")).text
      expect(first).toContain("Extra zz-18")
      expect(first).not.toContain("Extra zz-19")
      const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first)![1]!.replaceAll("&amp;", "&")
      expect(next).toBe("/console/products?after=zz-18")
      const second = (yield* client.get(next)).text
      expect(second).toContain("Extra zz-19")
      expect(second).toContain("Extra zz-23")
      expect(second).not.toContain("Extra zz-18")
      expect(second).not.toContain(`rel="next"`)

      expect((yield* request("DELETE", "/products/zz-20")).status).toBe(200)
      expect((yield* client.get(next)).text).not.toContain("Extra zz-20")
      expect((yield* client.get(`${next}&archived=true`)).text).toContain("Extra zz-20")
    })))

  it.effect("needs a signed-in session: the page sends to sign-in, a form is refused", () =>
    run(Effect.gen(function*() {
      const anonymous = yield* makeConsoleClient
      const page = yield* anonymous.get("/console/products")
      expect(page.status).toBe(303)
      expect(page.headers.get("location")).toBe("/console/sign-in")
      expect((yield* anonymous.get(SHIRT)).headers.get("location")).toBe("/console/sign-in")
      const form = yield* anonymous.post(`${SHIRT}/title`, { version: "1", title: "Hijacked" })
      expect(form.status).toBe(403)
      expect((yield* apiProduct("tshirt-classic")).title).toBe("Classic Cotton T-Shirt")
    })))
})

describe("a product's forms in the console", () => {
  it.effect("the title saved, on the version shown; the catalog sells the change at once", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const { version } = yield* shown(client)
      const saved = yield* client.post(`${SHIRT}/title`, { version, title: "  Organic Cotton T-Shirt  " })
      expect(saved.status).toBe(303)
      expect(saved.headers.get("location")).toBe(`${SHIRT}?done=title`)
      const after = yield* client.get(saved.headers.get("location")!)
      expect(after.text).toContain("Title saved.")
      const product = yield* apiProduct("tshirt-classic")
      expect(product).toMatchObject({ title: "Organic Cotton T-Shirt", version: Number(version) + 1 })
      expect(product.variants[0]).toMatchObject({ unit_amount: 2500, stock: { on_hand: 100 } })
      // The stock page names products from this process's catalog: reloaded by the write.
      expect((yield* client.get("/console/stock")).text).toContain("Organic Cotton T-Shirt</td>")
    })))

  it.effect("a stale form (the product changed since the page) is refused with a reason, not applied", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const { stockSeen, version } = yield* shown(client)
      // Meanwhile, through the API.
      expect(
        (yield* request("PATCH", "/products/tshirt-classic/variants/tshirt-classic", {
          body: { unit_amount: 2700 }
        })).status
      ).toBe(200)
      const title = yield* client.post(`${SHIRT}/title`, { version, title: "Stale title" })
      expect(title.status).toBe(409)
      expect(title.text).toContain("The product changed since the page was shown")
      expect(title.text).toContain("nothing was changed")
      const variant = yield* client.post(SHIRT_VARIANT, {
        version,
        stock_seen: stockSeen,
        unit_amount: "20.00",
        list_amount: "",
        stock: stockSeen,
        availability: "in_stock"
      })
      expect(variant.status).toBe(409)
      const archive = yield* client.post(`${SHIRT}/archive`, { version })
      expect(archive.status).toBe(409)
      for (const missing of [{}, { version: "v1" }, { version: "99999999999" }]) {
        expect((yield* client.post(`${SHIRT}/archive`, missing)).status).toBe(409)
      }
      const product = yield* apiProduct("tshirt-classic")
      expect(product).toMatchObject({ title: "Classic Cotton T-Shirt", archived: false })
      expect(product.variants[0].unit_amount).toBe(2700)
      // The refusal shows the product as it is now: its form works.
      expect(title.text).toContain("27.00")
      expect(
        (yield* client.post(`${SHIRT}/title`, {
          version: hiddenField(title.text, "version")!,
          title: "Fresh title"
        })).status
      ).toBe(303)
    })))

  it.effect("a price typed as a decimal is its minor units exactly", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      for (
        const [typed, minor] of [
          ["19.99", 1999],
          ["0.3", 30],
          ["0.30", 30],
          ["1.1", 110],
          ["4.35", 435],
          ["1.15", 115],
          ["1234567.8", undefined],
          ["1000000.00", 100_000_000],
          [" 25 ", 2500],
          ["0", 0],
          ["007.10", 710]
        ] as const
      ) {
        const saved = yield* postVariant(client, { unit_amount: typed })
        if (minor === undefined) {
          expect(saved.status, typed).toBe(400)
          continue
        }
        expect(saved.status, `${typed}: ${saved.text}`).toBe(303)
        expect((yield* apiProduct("tshirt-classic")).variants[0].unit_amount, typed).toBe(minor)
      }
      const list = yield* postVariant(client, { unit_amount: "25.00", list_amount: "30.1" })
      expect(list.status).toBe(303)
      expect((yield* apiProduct("tshirt-classic")).variants[0]).toMatchObject({ unit_amount: 2500, list_amount: 3010 })
      expect((yield* client.get(SHIRT)).text).toContain("30.10 USD")
      // A blank list price removes it.
      expect((yield* postVariant(client, { list_amount: "" })).status).toBe(303)
      expect((yield* apiProduct("tshirt-classic")).variants[0].list_amount).toBeUndefined()
    })))

  it.effect("invalid amounts, stock and availability are shown on the page, nothing written", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const before = yield* apiProduct("tshirt-classic")
      const cases: ReadonlyArray<[Record<string, string>, string]> = [
        [{ unit_amount: "1.005" }, "at most two decimals"],
        [{ unit_amount: "0.1+0.2" }, "at most two decimals"],
        [{ unit_amount: "1e3" }, "at most two decimals"],
        [{ unit_amount: "-1" }, "at most two decimals"],
        [{ unit_amount: "1,50" }, "at most two decimals"],
        [{ unit_amount: ".5" }, "at most two decimals"],
        [{ unit_amount: "5." }, "at most two decimals"],
        [{ unit_amount: "" }, "at most two decimals"],
        [{ unit_amount: "Infinity" }, "at most two decimals"],
        [{ unit_amount: "1000000.01" }, "at most 1000000.00 USD"],
        [{ unit_amount: "99999999999" }, "at most two decimals"],
        [{ list_amount: "abc" }, "or leave it blank for none"],
        [{ list_amount: "2.555" }, "or leave it blank for none"],
        [{ stock: "-5" }, "whole number of units"],
        [{ stock: "1.5" }, "whole number of units"],
        [{ stock: "" }, "whole number of units"],
        [{ stock: "1000000001" }, "whole number of units"],
        [{ availability: "sold_out" }, "Choose one of the availabilities"],
        [{ availability: "" }, "Choose one of the availabilities"],
        [{ stock_seen: "", stock: "7" }, "The form lacks the stock it was shown with"]
      ]
      for (const [changes, message] of cases) {
        const refused = yield* postVariant(client, changes)
        expect(refused.status, JSON.stringify(changes)).toBe(400)
        expect(refused.text, JSON.stringify(changes)).toContain(message)
        expect(refused.text).toContain(`role="alert"`)
      }
      const { version } = yield* shown(client)
      for (const title of ["", "   ", "x".repeat(257), "Nul\u0000title"]) {
        const refused = yield* client.post(`${SHIRT}/title`, { version, title })
        expect(refused.status, title).toBe(400)
        expect(refused.text).toContain("Give a title of 1 to 256 characters.")
      }
      expect(yield* apiProduct("tshirt-classic")).toEqual(before)
      // Unknown products and variants are 404 pages.
      expect((yield* client.get("/console/products/no-such")).status).toBe(404)
      expect((yield* client.get("/console/products/%00")).status).toBe(404)
      expect((yield* client.post("/console/products/no-such/title", { version: "1", title: "x" })).status).toBe(404)
      expect((yield* client.post(`${SHIRT}/variants/mug-ceramic`, { version })).status).toBe(404)
    })))

  it.effect("stock: set only when changed, never over units sold since the page; not below what sessions hold", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const { stockSeen, version } = yield* shown(client)
      expect(stockSeen).toBe("100")
      // Two sold meanwhile: the stock changes, the product does not.
      yield* paidOrder()
      const base = { version, stock_seen: stockSeen, unit_amount: "25.00", list_amount: "", availability: "in_stock" }
      const overSold = yield* client.post(SHIRT_VARIANT, { ...base, stock: "150" })
      expect(overSold.status).toBe(409)
      expect(overSold.text).toContain("changed since the page was shown (98 on hand now)")
      expect((yield* apiProduct("tshirt-classic")).variants[0].stock.on_hand).toBe(98)
      // The stock left as shown is not written back: the price alone changes.
      const priced = yield* client.post(SHIRT_VARIANT, { ...base, stock: stockSeen, unit_amount: "26.00" })
      expect(priced.status).toBe(303)
      expect((yield* apiProduct("tshirt-classic")).variants[0]).toMatchObject({
        unit_amount: 2600,
        stock: { on_hand: 98 }
      })
      // A session holds 3: the stock cannot go below.
      yield* createReadySession([{ id: "tshirt-classic", quantity: 3 }])
      const below = yield* postVariant(client, { unit_amount: "26.00", stock: "2" })
      expect(below.status).toBe(422)
      expect(below.text).toContain("Checkout sessions hold 3 units of tshirt-classic")
      const set = yield* postVariant(client, { unit_amount: "26.00", stock: "3", availability: "pre_order" })
      expect(set.status).toBe(303)
      expect((yield* apiProduct("tshirt-classic")).variants[0]).toMatchObject({
        availability: "pre_order",
        stock: { on_hand: 3, reserved: 3 }
      })
      // Nothing different: nothing written.
      const { version: now } = yield* shown(client)
      const same = yield* postVariant(client, { unit_amount: "26.00", availability: "pre_order" })
      expect(same.headers.get("location")).toBe(`${SHIRT}?done=unchanged`)
      expect(String((yield* apiProduct("tshirt-classic")).version)).toBe(now)
    })))

  it.effect("archive: no longer sold, the page says so and offers no form", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const { version } = yield* shown(client)
      const archived = yield* client.post(`${SHIRT}/archive`, { version })
      expect(archived.status).toBe(303)
      expect(archived.headers.get("location")).toBe(`${SHIRT}?done=archive`)
      const page = (yield* client.get(archived.headers.get("location")!)).text
      expect(page).toContain("Product archived: it is no longer sold.")
      expect(page).not.toContain(`action="${SHIRT}/title"`)
      expect((yield* apiProduct("tshirt-classic")).archived).toBe(true)
      const created = yield* post("/checkout_sessions", { items: [{ id: "tshirt-classic", quantity: 1 }] })
      expect(created.status).toBe(400)
      const title = yield* client.post(`${SHIRT}/title`, { version: String(Number(version) + 1), title: "Back" })
      expect(title.status).toBe(409)
      expect((yield* client.get("/console/products")).text).not.toContain("Classic Cotton T-Shirt")
    })))

  it.effect("a title like markup is shown as text on the list and the product's page", () =>
    run(Effect.gen(function*() {
      const title = "<script>alert(1)</script> \"'&"
      expect((yield* post("/products", { id: "xss", title, variants: [{ id: "xss-1", unit_amount: 100 }] })).status)
        .toBe(201)
      const client = yield* signedInConsole()
      for (const path of ["/console/products", "/console/products/xss"]) {
        const page = (yield* client.get(path)).text
        expect(page).not.toContain("<script>")
        expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &quot;&#39;&amp;")
      }
      const { version } = yield* shown(client, "/console/products/xss")
      const renamed = yield* client.post("/console/products/xss/title", { version, title: "<b>bold</b>" })
      expect(renamed.status).toBe(303)
      expect((yield* client.get("/console/products/xss")).text).toContain("&lt;b&gt;bold&lt;/b&gt;")
    })))

  it.effect("forms without the session's CSRF token, or from another site, are refused and change nothing", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      const { version } = yield* shown(client)
      for (
        const [fields, headers] of [
          [{ csrf_token: "" }, {}],
          [{ csrf_token: "A".repeat(22) }, {}],
          [{}, { "sec-fetch-site": "cross-site" }]
        ] as const
      ) {
        expect((yield* client.post(`${SHIRT}/title`, { version, title: "Forged", ...fields }, headers)).status)
          .toBe(403)
        expect((yield* client.post(`${SHIRT}/archive`, { version, ...fields }, headers)).status).toBe(403)
      }
      const product = yield* apiProduct("tshirt-classic")
      expect(product).toMatchObject({ title: "Classic Cotton T-Shirt", archived: false, version: Number(version) })
    })))
})
