/**
 * The console's products and product feed pages in a real browser (Debian's Chromium): the merchant
 * finds a product, sets its price as a decimal and its stock; a form left open in another tab while the
 * product changed is refused with a reason; a product titled like markup runs nothing; the feed page
 * pushes every product to a scripted Feed API. Screenshots are kept in test-results/screenshots/.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { scriptedFeedServer } from "../feeds/scripted-feed-server.ts"
import { hasChromium, launchBrowser, screenshotPath, serveApp } from "../support/browser.ts"
import { API_KEY, get, MERCHANT_API_KEY, post, testApp } from "../support/http.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, feedApiUrl?: string) =>
  Effect.provide(
    Effect.scoped(effect),
    testApp({
      config: {
        publicBaseUrl: "http://shop.test",
        port: 8080,
        ...(feedApiUrl === undefined ? {} : {
          feedPublication: Option.some({ apiUrl: feedApiUrl, apiKey: Redacted.make(API_KEY), targetCountry: "US" })
        })
      }
    })
  ) as Effect.Effect<A, E, never>

const use = <A>(promise: () => Promise<A>) => Effect.promise(promise)

/** A browser context signed in to the console at `base`, and its first page. */
const signedIn = (base: string) =>
  Effect.gen(function*() {
    const browser = yield* launchBrowser
    const context = yield* use(() => browser.newContext())
    const page = yield* use(() => context.newPage())
    yield* use(() => page.goto(`${base}/console/sign-in`))
    yield* use(() => page.getByLabel("Merchant API key").fill(MERCHANT_API_KEY))
    yield* use(() => page.getByRole("button", { name: "Sign in" }).click())
    expect(page.url()).toBe(`${base}/console/orders`)
    return { context, page }
  })

describe.skipIf(!hasChromium)("the console's products in Chromium", () => {
  it.live("the merchant finds a product, sets its price as a decimal and its stock; the API shows it", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const { page } = yield* signedIn(base)
      yield* use(() => page.getByRole("link", { name: "Products", exact: true }).click())
      expect(page.url()).toBe(`${base}/console/products`)
      yield* use(() => page.screenshot({ path: screenshotPath("console-products"), fullPage: true }))
      yield* use(() => page.getByLabel("Search").fill("shirt"))
      yield* use(() => page.getByRole("button", { name: "Show" }).click())
      const found = yield* use(() => page.locator("main table").innerText())
      expect(found).toContain("Classic Cotton T-Shirt")
      expect(found).not.toContain("Ceramic Coffee Mug")
      yield* use(() => page.getByRole("link", { name: "Classic Cotton T-Shirt" }).click())
      expect(page.url()).toBe(`${base}/console/products/tshirt-classic`)

      const variant = page.getByRole("group", { name: "Variant tshirt-classic" })
      yield* use(() => variant.getByLabel("Price in USD", { exact: true }).fill("19.99"))
      yield* use(() => variant.getByLabel("List price in USD").fill("24.50"))
      yield* use(() => variant.getByLabel("Stock on hand").fill("42"))
      yield* use(() => variant.getByLabel("Availability").selectOption("backorder"))
      yield* use(() => variant.getByRole("button", { name: "Save variant" }).click())
      expect(yield* use(() => page.getByRole("status").textContent())).toBe("Variant saved.")
      const table = yield* use(() => page.locator("main table").innerText())
      expect(table).toMatch(/19\.99 USD\s+24\.50 USD\s+backorder\s+42\s+0/)
      yield* use(() => page.screenshot({ path: screenshotPath("console-product-saved"), fullPage: true }))
      const product = (yield* get("/products/tshirt-classic")).body
      expect(product.variants[0]).toMatchObject({
        unit_amount: 1999,
        list_amount: 2450,
        availability: "backorder",
        stock: { on_hand: 42 }
      })

      // A third decimal is refused by the form itself (its pattern): nothing is posted (the server's refusal: console-products.test.ts).
      yield* use(() => variant.getByLabel("Price in USD", { exact: true }).fill("1.005"))
      yield* use(() => variant.getByRole("button", { name: "Save variant" }).click())
      expect(page.url()).toBe(`${base}/console/products/tshirt-classic?done=variant`)
      expect((yield* get("/products/tshirt-classic")).body.variants[0].unit_amount).toBe(1999)
    })))

  it.live("a form of a page the product changed since is refused with a reason, and overwrites nothing", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const { context, page } = yield* signedIn(base)
      const other = yield* use(() => context.newPage())
      for (const tab of [page, other]) yield* use(() => tab.goto(`${base}/console/products/mug-ceramic`))
      yield* use(() => page.getByLabel("Title", { exact: true }).fill("Stoneware Mug"))
      yield* use(() => page.getByRole("button", { name: "Save title" }).click())
      expect(yield* use(() => page.getByRole("status").textContent())).toBe("Title saved.")

      yield* use(() => other.getByLabel("Title", { exact: true }).fill("Porcelain Mug"))
      const [response] = yield* use(() =>
        Promise.all([
          other.waitForResponse(`${base}/console/products/mug-ceramic/title`),
          other.getByRole("button", { name: "Save title" }).click()
        ])
      )
      expect(response.status()).toBe(409)
      expect(yield* use(() => other.getByRole("alert").textContent())).toContain(
        "The product changed since the page was shown"
      )
      // The refusal shows the product as it is now.
      expect(yield* use(() => other.getByLabel("Title", { exact: true }).inputValue())).toBe("Stoneware Mug")
      yield* use(() => other.screenshot({ path: screenshotPath("console-product-stale-refused"), fullPage: true }))
      expect((yield* get("/products/mug-ceramic")).body.title).toBe("Stoneware Mug")
    })))

  it.live("a product titled <script>alert(1)</script> shows as text and runs nothing", () =>
    run(Effect.gen(function*() {
      const title = "<script>alert(1)</script><img src=x onerror=alert(2)>"
      expect((yield* post("/products", { id: "xss", title, variants: [{ id: "xss-1", unit_amount: 100 }] })).status)
        .toBe(201)
      const base = yield* serveApp
      const { page } = yield* signedIn(base)
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      for (
        const [path, shot] of [["/console/products", "console-products-escaped"], [
          "/console/products/xss",
          "console-product-escaped"
        ]]
      ) {
        yield* use(() => page.goto(`${base}${path}`))
        expect(yield* use(() => page.locator("main").innerText())).toContain(title)
        expect(yield* use(() => page.locator("main script, main img").count())).toBe(0)
        yield* use(() => page.screenshot({ path: screenshotPath(shot!), fullPage: true }))
      }
      expect(dialogs).toEqual([])
    })))

  it.live("the product feed page pushes every product now to the agent's Feed API", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* scriptedFeedServer([
        { status: 201, body: { id: "feed_scripted", target_country: "US", updated_at: "2026-04-20T12:00:00Z" } },
        { status: 200, body: { id: "feed_scripted", accepted: true } }
      ])
      yield* run(
        Effect.gen(function*() {
          const base = yield* serveApp
          const { page } = yield* signedIn(base)
          yield* use(() => page.getByRole("link", { name: "Product feed" }).click())
          expect(yield* use(() => page.locator("main").innerText())).toContain("not created yet")
          yield* use(() => page.getByRole("button", { name: "Push all now" }).click())
          expect(yield* use(() => page.getByRole("status").textContent())).toContain(
            "Pushed every product: 6 products accepted, 0 failed"
          )
          expect(yield* use(() => page.locator("main").innerText())).toContain("feed_scripted")
          yield* use(() => page.screenshot({ path: screenshotPath("console-feed"), fullPage: true }))
          expect(server.received.map((r) => r.method)).toEqual(["POST", "PATCH"])
        }),
        server.baseUrl
      )
    })))
})
