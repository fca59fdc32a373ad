/**
 * The console's order pages; pure. The actions shown are asked of the order state machine, so a page
 * offers exactly what the API would accept.
 */
import type { Buyer } from "../../checkout/session/schemas.ts"
import { canTransition, isAllDigital, refundableRemainder } from "../../orders/model/order-state-machine.ts"
import { type Order, ORDER_STATUSES, type OrderStatus } from "../../orders/model/order.ts"
import { type Html, html } from "../../shared/html.ts"
import { formatAmount, parseDecimalAmount } from "../../shared/money.ts"
import { CONSOLE_PATH } from "./cookies.ts"
import { csrfField, time } from "./layout.ts"

/** What the pages show of an order event and its delivery (the outbox record has more). */
export interface DeliveryRow {
  readonly id: string
  readonly orderId: string
  readonly sequence: number
  readonly type: string
  readonly state: "pending" | "delivered" | "dead"
  readonly attempts: number
  readonly nextAttemptAt: number
  readonly lastStatus: number | null
  readonly lastError: string | null
}

export const orderPath = (id: string) => `${CONSOLE_PATH}/orders/${encodeURIComponent(id)}`

export interface OrderListFilter {
  readonly status?: OrderStatus | undefined
  readonly search?: string | undefined
}

export interface ListedOrder {
  readonly order: Order
  readonly createdAt: number
}

const total = (order: Order) => order.totals.find((entry) => entry.type === "total")?.amount ?? 0

const statusBadge = (status: string) => html`<span class="status">${status.replace("_", " ")}</span>`

export const renderOrderList = (
  orders: ReadonlyArray<ListedOrder>,
  filter: OrderListFilter,
  currency: string
): Html =>
  html`<form method="get" action="${CONSOLE_PATH}/orders" role="search">
<label>Status <select name="status"><option value="">any</option>${
    ORDER_STATUSES.map((status) =>
      html`<option value="${status}"${status === filter.status && html` selected`}>${status}</option>`
    )
  }</select></label>
<label>Order or session id <input type="search" name="q" value="${filter.search ?? ""}" maxlength="128"></label>
<button type="submit">Show</button></form>${
    orders.length === 0
      ? html`<p>No orders${filter.status !== undefined || filter.search !== undefined ? " match" : " yet"}.</p>`
      : html`<table><thead><tr><th scope="col">Order</th><th scope="col">Status</th>
<th scope="col" class="opt">Placed</th><th scope="col" class="opt">Checkout session</th>
<th scope="col" class="n">Total</th></tr></thead><tbody>${
        orders.map(({ createdAt, order }) =>
          html`<tr><td><a href="${orderPath(order.id)}">${order.id}</a></td><td>${statusBadge(order.status)}</td>
<td class="opt">${time(createdAt)}</td><td class="opt">${order.checkout_session_id}</td>
<td class="n">${formatAmount(total(order), currency)}</td></tr>`
        )
      }</tbody></table>`
  }`

export interface OrderDetail {
  readonly order: Order
  readonly createdAt: number
  readonly buyer: Buyer | undefined
  /** Newest first. */
  readonly events: ReadonlyArray<
    DeliveryRow & { readonly payload: { readonly data: { readonly status: string } }; readonly createdAt: number }
  >
  readonly currency: string
  readonly csrfToken: string
  /** The order's `orderTag`: an action applies only to the order as this page shows it. */
  readonly seen: string
}

const actionForm = (order: Order, action: string, detail: OrderDetail, label: string, fields?: Html) =>
  html`<form method="post" action="${orderPath(order.id)}/${action}">${csrfField(detail.csrfToken)}
<input type="hidden" name="seen" value="${detail.seen}">${fields}<button type="submit">${label}</button></form>`

const actions = (detail: OrderDetail): Html => {
  const { currency, order } = detail
  const status = order.status
  const form = (action: string, label: string, fields?: Html) => actionForm(order, action, detail, label, fields)
  const remainder = refundableRemainder(order)
  return html`<section aria-labelledby="actions"><h2 id="actions">Actions</h2>${
    canTransition(status, "confirmed") && form("confirm", "Confirm")
  }${canTransition(status, "manual_review") && form("hold", "Hold for review")}${
    canTransition(status, "shipped") &&
    html`<fieldset><legend>Ship</legend>${
      form(
        "ship",
        "Ship",
        html`<label>Carrier <input name="carrier" required maxlength="128"></label>
<label>Tracking number <input name="tracking_number" required maxlength="128"></label>
<label>Tracking URL <input name="tracking_url" type="url" maxlength="2048"></label>`
      )
    }</fieldset>`
  }${
    (status === "shipped" || (canTransition(status, "fulfilled") && isAllDigital(order))) &&
    form("fulfill", status === "shipped" ? "Mark delivered" : "Mark fulfilled")
  }${canTransition(status, "canceled") && form("cancel", "Cancel order")}${
    status !== "created" && remainder > 0 &&
    html`<fieldset><legend>Refund (up to ${formatAmount(remainder, currency)})</legend>${
      form(
        "refund",
        "Refund",
        html`<label>Amount in ${currency.toUpperCase()} <input name="amount" required inputmode="decimal"
pattern="[0-9]+([.][0-9]{1,2})?" placeholder="12.50"></label>
<label>To <select name="type"><option value="original_payment">the original payment</option>
<option value="store_credit">store credit</option></select></label>`
      )
    }</fieldset>`
  }<fieldset><legend>Buyer's link</legend><p>A new link replaces the buyer's order page link; the old one stops working.</p>${
    form("new-buyer-link", "Make a new buyer link")
  }</fieldset></section>`
}

export const renderOrderDetail = (detail: OrderDetail): Html => {
  const { currency, order } = detail
  const buyer = detail.buyer
  return html`<dl><dt>Status</dt><dd>${statusBadge(order.status)}</dd>
<dt>Placed</dt><dd>${time(detail.createdAt)}</dd>
<dt>Checkout session</dt><dd>${order.checkout_session_id}</dd>
<dt>Buyer</dt><dd>${buyer === undefined ? "–" : `${buyer.first_name} ${buyer.last_name} <${buyer.email}>`}</dd>
<dt>Buyer's order page</dt><dd><a href="${order.permalink_url}" rel="noreferrer">${order.permalink_url}</a></dd></dl>
${actions(detail)}
<section aria-labelledby="items"><h2 id="items">Items</h2><table><thead><tr><th scope="col">Item</th>
<th scope="col" class="n">Ordered</th><th scope="col" class="n">Shipped</th><th scope="col" class="n">Total</th></tr></thead><tbody>${
    order.line_items.map((line) =>
      html`<tr><td>${line.title} <small>(${line.product_id})</small></td><td class="n">${line.quantity.ordered}</td>
<td class="n">${line.quantity.shipped}</td><td class="n">${formatAmount(line.total, currency)}</td></tr>`
    )
  }</tbody></table><table><tbody>${
    order.totals.map((entry) =>
      html`<tr><th scope="row">${entry.display_text}</th><td class="n">${
        formatAmount(entry.amount, currency)
      }</td></tr>`
    )
  }</tbody></table></section>
<section aria-labelledby="fulfillments"><h2 id="fulfillments">Fulfillments</h2>${
    order.fulfillments.length === 0 ?
      html`<p>None yet.</p>` :
      html`<ul>${
        order.fulfillments.map((fulfillment) =>
          html`<li>${fulfillment.id}: ${fulfillment.type}, ${fulfillment.status}${
            fulfillment.carrier !== undefined && html` · ${fulfillment.carrier}`
          }${fulfillment.tracking_number !== undefined && html` · tracking ${fulfillment.tracking_number}`}</li>`
        )
      }</ul>`
  }</section>
<section aria-labelledby="adjustments"><h2 id="adjustments">Refunds and adjustments</h2>${
    order.adjustments.length === 0 ?
      html`<p>None.</p>` :
      html`<ul>${
        order.adjustments.map((adjustment) =>
          html`<li>${adjustment.type}${adjustment.status !== "completed" && html` (${adjustment.status})`}${
            adjustment.amount !== undefined && html` ${formatAmount(adjustment.amount, currency)}`
          } · ${time(adjustment.occurred_at)}</li>`
        )
      }</ul>`
  }</section>
<section aria-labelledby="events"><h2 id="events">Order events</h2><table><thead><tr><th scope="col">#</th>
<th scope="col">Event</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Delivery</th>
<th scope="col" class="opt">Made</th></tr></thead><tbody>${
    detail.events.map((event) =>
      html`<tr><td>${event.sequence}</td><td>${event.id}</td><td>${event.type}</td><td>${event.payload.data.status}</td>
<td>${event.state} (${event.attempts} attempt${event.attempts === 1 ? "" : "s"})</td><td class="opt">${
        time(event.createdAt)
      }</td></tr>`
    )
  }</tbody></table></section>`
}

/** Major units as typed in a form (`12`, `12.5`, `12.50`) → minor units, exactly; undefined otherwise or for zero. */
export const minorUnitsOf = (text: string): number | undefined => {
  const minor = parseDecimalAmount(text)
  return minor !== undefined && minor > 0 ? minor : undefined
}
