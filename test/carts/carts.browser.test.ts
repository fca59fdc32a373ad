/**
 * The cart hand-off in a real browser (Debian's Chromium): the agent's cart opened at its `continue_url`
 * shows its items and estimated total, escaped; its button starts a checkout; another site's form is
 * refused; the console's carts page counts the cart as one that became a checkout. Screenshots are kept
 * in test-results/screenshots/.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { hasChromium, launchBrowser, screenshotPath, serveApp, serveStaticPage } from "../support/browser.ts"
import { MERCHANT_API_KEY, request, testApp } from "../support/http.ts"
import { createCart } from "./cart-fixtures.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    Effect.scoped(effect),
    testApp({ config: { publicBaseUrl: "http://shop.test", port: 8080 } })
  ) as Effect.Effect<A, E, never>

const use = <A>(promise: () => Promise<A>) => Effect.promise(promise)

const markupItem = "<img src=x onerror=alert(1)>"

/** A cart the agent made; its page's path (the test's server is on another origin than PUBLIC_BASE_URL). */
const agentCart = Effect.map(
  createCart({
    line_items: [{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }, { id: markupItem }],
    buyer: { email: "buyer@example.com" }
  }),
  (response) => {
    expect(response.status).toBe(201)
    return { cart: response.body, path: new URL(response.body.continue_url).pathname }
  }
)

describe.skipIf(!hasChromium)("the cart hand-off in Chromium", () => {
  it.live("the buyer opens the cart, starts a checkout; the console counts the cart as a checkout", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const { cart, path } = yield* agentCart
      const browser = yield* launchBrowser
      const context = yield* use(() => browser.newContext())
      const page = yield* use(() => context.newPage())
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      yield* use(() => page.goto(`${base}${path}`))
      expect(yield* use(() => page.getByRole("heading", { level: 1 }).textContent())).toBe("Your cart")
      const shown = yield* use(() => page.locator("main").innerText())
      expect(shown).toContain("Classic Cotton T-Shirt")
      expect(shown).toContain("Ceramic Coffee Mug, 12 oz")
      expect(shown).toContain(markupItem)
      expect(shown).toContain("Not sold here")
      expect(shown).toMatch(/Estimated total\s+64\.00 USD/)
      expect(yield* use(() => page.locator("img").count())).toBe(0)
      yield* use(() => page.screenshot({ path: screenshotPath("cart-page"), fullPage: true }))
      // The item not sold here keeps the checkout from starting; the page says why.
      yield* use(() => page.getByRole("button", { name: "Start checkout" }).click())
      expect(yield* use(() => page.getByRole("alert").textContent())).toContain("cannot be bought now")
      yield* use(() => page.screenshot({ path: screenshotPath("cart-page-refused"), fullPage: true }))

      // The agent removes it; the buyer reloads and starts the checkout.
      expect((yield* createCart({ line_items: [{ id: "hoodie-zip", quantity: 1 }] })).status).toBe(201)
      const replaced = yield* request("PUT", `/carts/${cart.id}`, {
        version: "2026-04-17",
        headers: { "idempotency-key": "browser-put" },
        body: { line_items: [{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }] }
      })
      expect(replaced.status).toBe(200)
      yield* use(() => page.goto(`${base}${path}`))
      yield* use(() => page.getByRole("button", { name: "Start checkout" }).click())
      expect(yield* use(() => page.getByRole("heading", { level: 1 }).textContent())).toBe("Checkout started")
      const started = yield* use(() => page.getByRole("status").innerText())
      expect(started).toMatch(/cs_[0-9A-Za-z]{22}/)
      yield* use(() => page.screenshot({ path: screenshotPath("cart-checkout-started"), fullPage: true }))

      // The console: two carts, one of which became a checkout.
      const merchant = yield* use(() => browser.newPage())
      yield* use(() => merchant.goto(`${base}/console/sign-in`))
      yield* use(() => merchant.getByLabel("Merchant API key").fill(MERCHANT_API_KEY))
      yield* use(() => merchant.getByRole("button", { name: "Sign in" }).click())
      yield* use(() => merchant.getByRole("link", { name: "Carts" }).click())
      expect(merchant.url()).toBe(`${base}/console/carts`)
      expect((yield* use(() => merchant.getByRole("status").innerText())).replace(/\s+/g, " ")).toBe(
        "2 carts; 1 became a checkout from the buyer's cart page."
      )
      const row = yield* use(() => merchant.getByRole("row").filter({ hasText: cart.id }).innerText())
      expect(row).toContain("Classic Cotton T-Shirt × 2")
      expect(row).toMatch(/64\.00 USD\s+1/)
      yield* use(() => merchant.screenshot({ path: screenshotPath("console-carts"), fullPage: true }))
      expect(dialogs).toEqual([])
    })))

  it.live("another site's form posting to the cart page starts nothing", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const { path } = yield* agentCart
      const browser = yield* launchBrowser
      const context = yield* use(() => browser.newContext())
      const page = yield* use(() => context.newPage())
      // The buyer opened the cart (so the browser holds its cookie); another site knows the link.
      yield* use(() => page.goto(`${base}${path}`))
      const forged = yield* serveStaticPage(
        `<!doctype html><title>Win a prize</title><form method="post" action="${base}${path}/checkout">` +
          `<input type="hidden" name="csrf_token" value="guessed"><button>Claim</button></form>`
      )
      const attacker = yield* use(() => context.newPage())
      yield* use(() => attacker.goto(forged))
      const [response] = yield* use(() =>
        Promise.all([attacker.waitForResponse(`${base}${path}/checkout`), attacker.click("button")])
      )
      expect(response.status()).toBe(403)
      expect(yield* use(() => attacker.getByRole("alert").textContent())).toContain("did not come from this page")
      yield* use(() => attacker.screenshot({ path: screenshotPath("cart-forged-form-refused") }))
    })))
})
