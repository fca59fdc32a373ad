/**
 * The buyer's cart page behind `continue_url`, and the page a checkout started from it shows; pure.
 * Every value is escaped by `html`; no script (the page's Content-Security-Policy allows none).
 */
import { createHash } from "node:crypto"
import type { Session } from "../../checkout/session/session.ts"
import { Html, html } from "../../shared/html.ts"
import { formatAmount } from "../../shared/money.ts"
import type { PricedCart } from "../cart-service.ts"

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:48rem;margin:0 auto;padding:1rem;line-height:1.5;color:#1a1a1a}" +
  "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd}" +
  "td.n,th.n{text-align:right}section{margin:1.5rem 0}button{font:inherit;padding:.4rem 1rem}" +
  ".problem{padding:.5rem .75rem;background:#fce8e6;border-left:4px solid #d93025}" +
  ".notice{padding:.5rem .75rem;background:#e6f4ea;border-left:4px solid #1e8e3e}"

/** No script; the one inline style sheet by its hash; forms post only to this origin. */
export const CART_PAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; " +
  `style-src 'sha256-${createHash("sha256").update(STYLE, "utf8").digest("base64")}'; ` +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

export const page = (title: string, body: Html): string =>
  html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<style>${new Html(STYLE)}</style></head><body><main>${body}</main></body></html>`.markup

const totalsTable = (rows: ReadonlyArray<{ readonly label: string; readonly amount: number }>, currency: string) =>
  html`<table><caption>Totals</caption><tbody>${
    rows.map((row) =>
      html`<tr><th scope="row">${row.label}</th><td class="n">${formatAmount(row.amount, currency)}</td></tr>`
    )
  }</tbody></table>`

export interface CartPageOptions {
  /** The form's CSRF token (also in the page's cookie). */
  readonly csrfToken: string
  readonly formAction: string
  readonly problem?: string | undefined
}

export const renderCartPage = ({ cart, estimate }: PricedCart, options: CartPageOptions): string => {
  const currency = estimate.currency
  const rows = estimate.lines.map((line) =>
    html`<tr><td>${line.product?.title ?? line.item.id}</td><td class="n">${line.item.quantity}</td><td>${
      line.product === undefined
        ? "Not sold here"
        : line.availability === "out_of_stock"
        ? "Out of stock"
        : "In stock"
    }</td><td class="n">${line.product === undefined ? "" : formatAmount(line.subtotal, currency)}</td></tr>`
  )
  const notes = estimate.notices.filter((notice) => notice.index === undefined).map((notice) =>
    html`<p>${notice.content}</p>`
  )
  const totals = [
    { label: "Subtotal", amount: estimate.subtotal },
    ...(estimate.tax === undefined ? [] : [{ label: "Estimated tax", amount: estimate.tax }]),
    { label: "Estimated total", amount: estimate.total }
  ]
  return page(
    "Your cart",
    html`<h1>Your cart</h1>${
      options.problem === undefined ? "" : html`<p class="problem" role="alert">${options.problem}</p>`
    }
<section aria-labelledby="items"><h2 id="items">Items</h2><table><thead><tr><th scope="col">Item</th>
<th scope="col" class="n">Qty</th><th scope="col">Availability</th><th scope="col" class="n">Subtotal</th></tr></thead>
<tbody>${rows}</tbody></table>${totalsTable(totals, currency)}${notes}</section>
<p>This cart is kept until <time datetime="${new Date(cart.expiresAt).toISOString()}">${
      new Date(cart.expiresAt).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC")
    }</time>.</p>
<form method="post" action="${options.formAction}"><input type="hidden" name="csrf_token" value="${options.csrfToken}">
<button type="submit">Start checkout</button></form>`
  )
}

/** `titleOf`: an item's name as the cart showed it (the session keeps ids only). */
export const renderCheckoutStarted = (session: Session, titleOf: (itemId: string) => string): string => {
  const currency = session.currency
  return page(
    "Checkout started",
    html`<h1>Checkout started</h1><p class="notice" role="status">A checkout of your cart was started:
<strong>${session.id}</strong>.</p>
<section aria-labelledby="items"><h2 id="items">Items</h2><table><thead><tr><th scope="col">Item</th>
<th scope="col" class="n">Qty</th><th scope="col" class="n">Total</th></tr></thead><tbody>${
      session.line_items.map((line) =>
        html`<tr><td>${titleOf(line.item.id)}</td><td class="n">${line.item.quantity}</td><td class="n">${
          formatAmount(line.total, currency)
        }</td></tr>`
      )
    }</tbody></table>${
      totalsTable(session.totals.map((t) => ({ label: t.display_text, amount: t.amount })), currency)
    }</section>
<p>Give this checkout's id to your shopping assistant to add the delivery address and pay; it is kept for a few hours.</p>`
  )
}

export const renderCartNotFound = (): string =>
  page("Cart not found", html`<h1>Cart not found</h1><p>This cart link is not valid, or the cart has expired.</p>`)

export const renderTryAgain = (): string =>
  page("Try again shortly", html`<h1>Try again shortly</h1><p>The cart cannot be read right now.</p>`)
