/**
 * The buyer's order page behind `permalink_url`, and its JSON twin; pure. Every value is escaped and the
 * page needs no script (its Content-Security-Policy allows none). Orders hold no card data to show.
 */
import { type Link } from "../../catalog/model/catalog.ts"
import { escapeHtml, isHttpUrl } from "../../shared/html.ts"
import { formatAmount } from "../../shared/money.ts"
import type { Order, OrderStatus } from "../model/order.ts"

/** A status the order reached, and when (ISO 8601). */
export interface StatusChange {
  readonly status: OrderStatus
  readonly at: string
}

export interface OrderPage {
  readonly order: Order
  readonly history: ReadonlyArray<StatusChange>
  readonly currency: string
  readonly links: ReadonlyArray<Link>
}

/** The statuses an order went through, oldest first; a repeated status is one step. */
export const historyOf = (changes: ReadonlyArray<StatusChange>): ReadonlyArray<StatusChange> =>
  changes.filter((change, index) => index === 0 || changes[index - 1]!.status !== change.status)

export const orderPageJson = (page: OrderPage) => ({
  order: page.order,
  currency: page.currency,
  status_history: page.history,
  links: page.links
})

const STATUS_WORDS: Readonly<Record<OrderStatus, string>> = {
  created: "Order placed",
  manual_review: "Under review",
  confirmed: "Confirmed",
  shipped: "Shipped",
  fulfilled: "Delivered",
  canceled: "Canceled"
}

const LINK_WORDS: Readonly<Record<string, string>> = {
  terms_of_use: "Terms of use",
  privacy_policy: "Privacy policy",
  return_policy: "Returns",
  shipping_policy: "Shipping policy",
  contact_us: "Contact us",
  about_us: "About us",
  faq: "FAQ",
  support: "Support"
}

const e = escapeHtml
const when = (iso: string) =>
  `<time datetime="${e(iso)}">${e(iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC"))}</time>`

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:48rem;margin:0 auto;padding:1rem;line-height:1.5;color:#1a1a1a}" +
  "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd}" +
  "td.n,th.n{text-align:right}.status{display:inline-block;padding:.1rem .6rem;border-radius:1rem;background:#e8f0fe}" +
  "ol.history{padding-left:1.2rem}section{margin:1.5rem 0}@media (max-width:32rem){th.opt,td.opt{display:none}}"

export const htmlDocument = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)}</title>` +
  `<style>${STYLE}</style></head><body><main>${body}</main></body></html>`

const itemsTable = (order: Order, currency: string) =>
  `<table><caption>Items</caption><thead><tr><th scope="col">Item</th><th scope="col" class="n">Qty</th>` +
  `<th scope="col" class="n opt">Shipped</th><th scope="col" class="n opt">Unit price</th>` +
  `<th scope="col" class="n">Total</th></tr></thead><tbody>` +
  order.line_items.map((line) =>
    `<tr><td>${e(line.title)}</td><td class="n">${line.quantity.ordered}</td>` +
    `<td class="n opt">${line.quantity.shipped}</td><td class="n opt">${
      e(formatAmount(line.unit_price, currency))
    }</td>` +
    `<td class="n">${e(formatAmount(line.total, currency))}</td></tr>`
  ).join("") + `</tbody></table>`

const totalsList = (order: Order, currency: string) =>
  `<table><caption>Totals</caption><tbody>` +
  order.totals.map((total) =>
    `<tr><th scope="row">${e(total.display_text)}</th><td class="n">${
      e(formatAmount(total.amount, currency))
    }</td></tr>`
  ).join("") + `</tbody></table>`

const shipments = (order: Order) => {
  if (order.fulfillments.length === 0) return `<p>Nothing has shipped yet.</p>`
  return `<ul>` + order.fulfillments.map((fulfillment) => {
    const tracking = fulfillment.tracking_number === undefined ? "" : isHttpUrl(fulfillment.tracking_url)
      ? ` · tracking <a href="${e(fulfillment.tracking_url)}" rel="noopener noreferrer">${
        e(fulfillment.tracking_number)
      }</a>`
      : ` · tracking ${e(fulfillment.tracking_number)}`
    const last = fulfillment.events[fulfillment.events.length - 1]
    return `<li>${e(fulfillment.type === "digital" ? "Digital delivery" : "Shipment")}: ${e(fulfillment.status)}` +
      `${fulfillment.carrier === undefined ? "" : ` · ${e(fulfillment.carrier)}`}${tracking}` +
      `${last === undefined ? "" : ` · ${when(last.occurred_at)}`}</li>`
  }).join("") + `</ul>`
}

const refunds = (order: Order, currency: string) =>
  order.refunds.length === 0 ? "" : `<section aria-labelledby="refunds"><h2 id="refunds">Refunds</h2><ul>` +
    order.refunds.map((refund) =>
      `<li>${e(formatAmount(refund.amount, currency))} ${
        refund.type === "store_credit" ? "as store credit" : "to the original payment"
      }</li>`
    ).join("") + `</ul></section>`

const merchantLinks = (links: ReadonlyArray<Link>) => {
  const shown = links.filter((link) => isHttpUrl(link.url))
  return shown.length === 0 ? "" : `<nav aria-label="Merchant"><ul>` +
    shown.map((link) => `<li><a href="${e(link.url)}">${e(LINK_WORDS[link.type] ?? link.type)}</a></li>`).join("") +
    `</ul></nav>`
}

export const renderOrderPage = (page: OrderPage): string => {
  const { currency, order } = page
  const history = page.history.map((change) =>
    `<li>${e(STATUS_WORDS[change.status] ?? change.status)} · ${when(change.at)}</li>`
  ).join("")
  return htmlDocument(
    `Order ${order.id}`,
    `<h1>Your order</h1><p>Order <strong>${e(order.id)}</strong> · ` +
      `<span class="status">${e(STATUS_WORDS[order.status] ?? order.status)}</span></p>` +
      `<section aria-labelledby="history"><h2 id="history">Status</h2><ol class="history">${history}</ol></section>` +
      `<section aria-labelledby="items"><h2 id="items">Items</h2>${itemsTable(order, currency)}` +
      `${totalsList(order, currency)}</section>` +
      `<section aria-labelledby="shipments"><h2 id="shipments">Shipments</h2>${shipments(order)}</section>` +
      refunds(order, currency) +
      merchantLinks(page.links)
  )
}

/** The page of a link that opens no order (unknown, revoked, or malformed). */
export const renderOrderNotFound = (): string =>
  htmlDocument(
    "Order not found",
    `<h1>Order not found</h1><p>This order link is not valid. Ask the assistant or the shop that sent it for a new one.</p>`
  )
