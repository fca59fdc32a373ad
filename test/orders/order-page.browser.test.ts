/**
 * The buyer's order page in a real browser (Debian's Chromium): the buyer opens the permalink and
 * sees the order; a product named like markup renders as text and runs nothing. Screenshots are
 * kept in test-results/screenshots/.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Catalog, fixedCatalog } from "../../src/catalog/catalog-service.ts"
import { hasChromium, launchBrowser, screenshotPath, serveApp } from "../support/browser.ts"
import { demoCatalogTitling } from "../support/fixtures.ts"
import { post, testApp, type TestAppOptions } from "../support/http.ts"
import { paidOrder } from "../support/three-d-secure.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(Effect.scoped(effect), testApp(options)) as Effect.Effect<A, E, never>

describe.skipIf(!hasChromium)("the buyer's order page in Chromium", () => {
  it.live("the buyer opens the permalink and sees the order, on a phone-sized screen too", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const order = yield* paidOrder()
      yield* post(`/orders/${order.id}/confirm`, {})
      yield* post(`/orders/${order.id}/ship`, { carrier: "UPS", tracking_number: "1Z999AA10123456784" })
      const browser = yield* launchBrowser
      const page = yield* Effect.promise(() => browser.newPage({ viewport: { width: 390, height: 844 } }))
      const response = yield* Effect.promise(() => page.goto(`${base}${new URL(order.permalink_url).pathname}`))
      expect(response?.status()).toBe(200)
      const heading = yield* Effect.promise(() => page.getByRole("heading", { level: 1 }).textContent())
      expect(heading).toBe("Your order")
      const text = yield* Effect.promise(() => page.locator("main").innerText())
      expect(text).toContain(order.id)
      expect(text).toContain("Classic Cotton T-Shirt")
      expect(text).toContain("UPS")
      expect(text).toContain("1Z999AA10123456784")
      expect(text).toMatch(/Order placed[\s\S]*Confirmed[\s\S]*Shipped/)
      // Nothing wider than the screen.
      const width = yield* Effect.promise(() => page.evaluate(() => document.documentElement.scrollWidth))
      expect(width).toBeLessThanOrEqual(390)
      yield* Effect.promise(() => page.screenshot({ path: screenshotPath("order-page-phone"), fullPage: true }))
    })))

  it.live("a product named <img src=x onerror=alert(1)> shows as text and runs nothing", () => {
    const catalog = demoCatalogTitling("tshirt-classic", "<img src=x onerror=alert(1)>")
    return run(
      Effect.gen(function*() {
        const base = yield* serveApp
        const order = yield* paidOrder()
        const browser = yield* launchBrowser
        const page = yield* Effect.promise(() => browser.newPage())
        const dialogs: Array<string> = []
        page.on("dialog", (dialog) => {
          dialogs.push(dialog.message())
          void dialog.dismiss()
        })
        yield* Effect.promise(() => page.goto(`${base}${new URL(order.permalink_url).pathname}`))
        const text = yield* Effect.promise(() => page.locator("main").innerText())
        expect(text).toContain("<img src=x onerror=alert(1)>")
        expect(yield* Effect.promise(() => page.locator("img").count())).toBe(0)
        expect(dialogs).toEqual([])
        yield* Effect.promise(() => page.screenshot({ path: screenshotPath("order-page-escaped"), fullPage: true }))
      }),
      { catalog: Layer.succeed(Catalog, fixedCatalog(catalog)) }
    )
  })
})
