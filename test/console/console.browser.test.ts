/**
 * The merchant console in a real browser (Debian's Chromium): an agent key is refused at sign-in, the
 * merchant signs in with a merchant key, ships an order with tracking, and both the buyer's page and the agent platform's received `order_update`
 * show it; another site's form is refused; a buyer named like markup renders as text. Screenshots
 * are kept in test-results/screenshots/.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeWebhookSender } from "../../src/orders/http/webhook-sender.ts"
import { WebhookTransport } from "../../src/orders/webhook-transport.ts"
import { hasChromium, launchBrowser, screenshotPath, serveApp, serveStaticPage } from "../support/browser.ts"
import { API_KEY, get, MERCHANT_API_KEY, testApp } from "../support/http.ts"
import { paidOrder } from "../support/three-d-secure.ts"
import { scriptedTransport } from "../support/webhooks.ts"

// Plain HTTP, as the test server is: the console's cookies are then not `Secure`.
const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    Effect.scoped(effect),
    testApp({ config: { publicBaseUrl: "http://shop.test", port: 8080 } })
  ) as Effect.Effect<
    A,
    E,
    never
  >

const use = <A>(promise: () => Promise<A>) => Effect.promise(promise)

/** A browser page signed in to the console at `base`. */
const signedInPage = (base: string) =>
  Effect.gen(function*() {
    const browser = yield* launchBrowser
    const context = yield* use(() => browser.newContext())
    const page = yield* use(() => context.newPage())
    yield* use(() => page.goto(`${base}/console`))
    expect(page.url()).toBe(`${base}/console/sign-in`)
    yield* use(() => page.screenshot({ path: screenshotPath("console-sign-in") }))
    yield* use(() => page.getByLabel("Merchant API key").fill(MERCHANT_API_KEY))
    yield* use(() => page.getByRole("button", { name: "Sign in" }).click())
    expect(page.url()).toBe(`${base}/console/orders`)
    return { page, context }
  })

describe.skipIf(!hasChromium)("the merchant console in Chromium", () => {
  it.live("an agent API key is refused at sign-in with a message saying so; the merchant key then signs in", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const browser = yield* launchBrowser
      const page = yield* use(() => browser.newPage())
      yield* use(() => page.goto(`${base}/console/sign-in`))
      yield* use(() => page.getByLabel("Merchant API key").fill(API_KEY))
      const [response] = yield* use(() =>
        Promise.all([
          page.waitForResponse(`${base}/console/sign-in`),
          page.getByRole("button", { name: "Sign in" }).click()
        ])
      )
      expect(response.status()).toBe(403)
      expect(page.url()).toBe(`${base}/console/sign-in`)
      expect(yield* use(() => page.getByRole("alert").textContent())).toBe(
        "That is an agent API key (API_KEYS): the console takes a merchant API key (MERCHANT_API_KEYS)."
      )
      yield* use(() => page.screenshot({ path: screenshotPath("console-sign-in-agent-key-refused") }))
      // No session: the console still sends the browser to sign-in, where the merchant key works.
      yield* use(() => page.goto(`${base}/console/orders`))
      expect(page.url()).toBe(`${base}/console/sign-in`)
      yield* use(() => page.getByLabel("Merchant API key").fill(MERCHANT_API_KEY))
      yield* use(() => page.getByRole("button", { name: "Sign in" }).click())
      expect(page.url()).toBe(`${base}/console/orders`)
    })))

  it.live("the merchant ships with tracking; the buyer's page and the platform's received order_update show it", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const order = yield* paidOrder()
      const { page } = yield* signedInPage(base)
      yield* use(() => page.screenshot({ path: screenshotPath("console-orders"), fullPage: true }))
      yield* use(() => page.getByRole("link", { name: order.id }).click())
      yield* use(() => page.getByRole("button", { name: "Confirm" }).click())
      expect(yield* use(() => page.getByRole("status").textContent())).toBe("Order confirmed.")
      yield* use(() => page.getByLabel("Carrier").fill("UPS"))
      yield* use(() => page.getByLabel("Tracking number").fill("1Z999AA10123456784"))
      yield* use(() => page.getByLabel("Tracking URL").fill("https://ups.example/track/1Z999AA10123456784"))
      yield* use(() => page.getByRole("button", { name: "Ship", exact: true }).click())
      expect(yield* use(() => page.getByRole("status").textContent())).toBe("Order shipped.")
      yield* use(() => page.screenshot({ path: screenshotPath("console-order-shipped"), fullPage: true }))
      expect((yield* get(`/orders/${order.id}`)).body.status).toBe("shipped")

      // The sender delivers the order's events, one after the other, to this process's receiver.
      const { transport } = yield* scriptedTransport([], "loopback")
      const sender = yield* makeWebhookSender().pipe(Effect.provideService(WebhookTransport, transport))
      for (let round = 0; round < 3; round++) {
        expect((yield* sender.deliverDue).map((report) => report.outcome)).toEqual(["delivered"])
      }
      yield* use(() => page.getByRole("link", { name: "Received events" }).click())
      yield* use(() => page.getByRole("link", { name: order.id }).click())
      const received = yield* use(() => page.locator("main").innerText())
      expect(received).toMatch(/order_update\s+shipped\s+shipped UPS tracking 1Z999AA10123456784/)
      yield* use(() => page.screenshot({ path: screenshotPath("console-received-events"), fullPage: true }))

      yield* use(() => page.goto(`${base}${new URL(order.permalink_url).pathname}`))
      const buyer = yield* use(() => page.locator("main").innerText())
      expect(buyer).toContain("UPS")
      expect(buyer).toContain("1Z999AA10123456784")
      yield* use(() => page.screenshot({ path: screenshotPath("console-buyer-page-after-shipping"), fullPage: true }))
    })))

  it.live("another site's form posting to the console is refused and changes nothing", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const order = yield* paidOrder()
      const { context, page } = yield* signedInPage(base)
      // The form a merchant's page would post, without the session's CSRF token.
      const forged = yield* serveStaticPage(
        `<!doctype html><title>Win a prize</title><form method="post" action="${base}/console/orders/${order.id}/cancel">` +
          `<input type="hidden" name="csrf_token" value="guessed"><button>Claim</button></form>`
      )
      const attacker = yield* use(() => context.newPage())
      yield* use(() => attacker.goto(forged))
      const [response] = yield* use(() =>
        Promise.all([attacker.waitForResponse(`${base}/console/orders/${order.id}/cancel`), attacker.click("button")])
      )
      expect(response.status()).toBe(403)
      expect(yield* use(() => attacker.getByRole("heading", { level: 1 }).textContent())).toBe("Form refused")
      yield* use(() => attacker.screenshot({ path: screenshotPath("console-forged-form-refused") }))
      expect((yield* get(`/orders/${order.id}`)).body.status).toBe("created")
      // The merchant's own form still works.
      yield* use(() => page.goto(`${base}/console/orders/${order.id}`))
      yield* use(() => page.getByRole("button", { name: "Cancel order" }).click())
      expect((yield* get(`/orders/${order.id}`)).body.status).toBe("canceled")
    })))

  it.live("a buyer named <img src=x onerror=alert(1)> shows as text and runs nothing", () =>
    run(Effect.gen(function*() {
      const base = yield* serveApp
      const name = "<img src=x onerror=alert(1)>"
      const order = yield* paidOrder(undefined, { first_name: name, last_name: "Doe", email: "x@example.com" })
      const { page } = yield* signedInPage(base)
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      for (
        const [path, shot] of [[`/console/orders/${order.id}`, "console-order-escaped"], [
          "/console/sessions",
          "console-sessions"
        ]]
      ) {
        yield* use(() => page.goto(`${base}${path}`))
        expect(yield* use(() => page.locator("main").innerText())).toContain(name)
        expect(yield* use(() => page.locator("img").count())).toBe(0)
        yield* use(() => page.screenshot({ path: screenshotPath(shot!), fullPage: true }))
      }
      for (const path of ["/console/stock", "/console/deliveries"]) {
        yield* use(() => page.goto(`${base}${path}`))
        yield* use(() => page.screenshot({ path: screenshotPath(`console-${path.split("/")[2]}`), fullPage: true }))
      }
      expect(dialogs).toEqual([])
    })))
})
