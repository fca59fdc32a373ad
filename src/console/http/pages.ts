/**
 * The console's other pages: sign-in, order-event deliveries, events the agent platform role
 * received, stock levels and checkout sessions. Pure: the handlers read what is shown.
 */
import type { CatalogSnapshot } from "../../catalog/model/catalog.ts"
import { SessionStatus } from "../../checkout/session/schemas.ts"
import type { Session } from "../../checkout/session/session.ts"
import { type Html, html } from "../../shared/html.ts"
import { formatAmount } from "../../shared/money.ts"
import { CONSOLE_PATH } from "./cookies.ts"
import { csrfField, time } from "./layout.ts"
import { type DeliveryRow, orderPath } from "./order-pages.ts"

// What the pages show of the stores' records (the records have these fields and more).
type DeliveryState = DeliveryRow["state"]
interface StockRow {
  readonly productId: string
  readonly onHand: number
  readonly reserved: number
}
interface ReceivedOrderRow {
  readonly orderId: string
  readonly status: string
  readonly lastRequestId: string
  readonly updatedAt: number
}
interface ReceivedEventRow {
  readonly requestId: string
  readonly type: string
  readonly status: string
  readonly payload: unknown
  readonly receivedAt: number
}

export const renderSignIn = (signInToken: string): Html =>
  html`<form method="post" action="${CONSOLE_PATH}/sign-in"><input type="hidden" name="csrf_token" value="${signInToken}">
<p><label>Merchant API key <input type="password" name="api_key" required autocomplete="current-password" size="40"></label></p>
<p><button type="submit">Sign in</button></p></form>
<p>Sign in with one of the merchant's API keys (<code>MERCHANT_API_KEYS</code>); an agent platform's key
(<code>API_KEYS</code>) does not open the console. The console keeps you signed in for eight hours in this
browser, or until you sign out.</p>`

const DELIVERY_STATES: ReadonlyArray<DeliveryState> = ["pending", "delivered", "dead"]

export const renderDeliveries = (
  events: ReadonlyArray<DeliveryRow>,
  counts: Readonly<Record<DeliveryState, number>>,
  state: DeliveryState | undefined,
  csrfToken: string,
  showOrders: boolean
): Html =>
  html`<p>${
    DELIVERY_STATES.map((name) =>
      html`<a href="${CONSOLE_PATH}/deliveries?state=${name}"${name === state && html` aria-current="page"`}>${name}: ${
        counts[name]
      }</a> · `
    )
  }<a href="${CONSOLE_PATH}/deliveries">all</a></p>${
    events.length === 0 ? html`<p>No order events${state !== undefined && ` ${state}`}.</p>` : html`<table><thead><tr>
<th scope="col">Event</th><th scope="col">Order</th><th scope="col">Type</th><th scope="col">State</th>
<th scope="col" class="n">Attempts</th><th scope="col" class="opt">Next attempt</th><th scope="col" class="opt">Last answer</th>
<th scope="col"></th></tr></thead><tbody>${
      events.map((event) =>
        html`<tr><td>${event.id}</td><td>${
          showOrders ? html`<a href="${orderPath(event.orderId)}">${event.orderId}</a>` : event.orderId
        } #${event.sequence}</td><td>${event.type}</td><td>${event.state}</td><td class="n">${event.attempts}</td>
<td class="opt">${event.state === "pending" ? time(event.nextAttemptAt) : "–"}</td><td class="opt">${
          event.lastStatus ?? ""
        } ${event.lastError ?? ""}</td><td>${
          event.state === "dead" &&
          html`<form method="post" action="${CONSOLE_PATH}/deliveries/${encodeURIComponent(event.id)}/redrive">${
            csrfField(csrfToken)
          }<button type="submit">Redrive</button></form>`
        }</td></tr>`
      )
    }</tbody></table>`
  }`

export const receivedOrderPath = (id: string) => `${CONSOLE_PATH}/received/${encodeURIComponent(id)}`

export const renderReceivedOrders = (orders: ReadonlyArray<ReceivedOrderRow>): Html =>
  orders.length === 0
    ? html`<p>No order events received yet.</p>`
    : html`<table><thead><tr><th scope="col">Order</th><th scope="col">Status</th><th scope="col" class="opt">Last event</th>
<th scope="col">Updated</th></tr></thead><tbody>${
      orders.map((order) =>
        html`<tr><td><a href="${receivedOrderPath(order.orderId)}">${order.orderId}</a></td><td>${order.status}</td>
<td class="opt">${order.lastRequestId}</td><td>${time(order.updatedAt)}</td></tr>`
      )
    }</tbody></table>`

interface ShipmentSeen {
  readonly carrier?: unknown
  readonly tracking_number?: unknown
  readonly status?: unknown
}

/** The shipments an event's order carries, read defensively: a received body is only known to be JSON. */
const shipmentsOf = (payload: unknown): ReadonlyArray<ShipmentSeen> => {
  const data = typeof payload === "object" && payload !== null ? (payload as { data?: unknown }).data : undefined
  const fulfillments = typeof data === "object" && data !== null
    ? (data as { fulfillments?: unknown }).fulfillments
    : undefined
  return Array.isArray(fulfillments) ? fulfillments.filter((f) => typeof f === "object" && f !== null) : []
}

const text = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "")

export const renderReceivedEvents = (events: ReadonlyArray<ReceivedEventRow>): Html =>
  events.length === 0 ? html`<p>No events for this order.</p>` : html`<table><thead><tr><th scope="col">Received</th>
<th scope="col">Type</th><th scope="col">Status</th><th scope="col">Shipments</th><th scope="col" class="opt">Request-Id</th>
</tr></thead><tbody>${
    events.map((event) =>
      html`<tr><td>${time(event.receivedAt)}</td><td>${event.type}</td><td>${event.status}</td><td>${
        shipmentsOf(event.payload).map((shipment) =>
          html`<div>${text(shipment.status)} ${text(shipment.carrier)} ${
            text(shipment.tracking_number) !== "" && html`tracking ${text(shipment.tracking_number)}`
          }</div>`
        )
      }</td><td class="opt">${event.requestId}</td></tr>`
    )
  }</tbody></table>`

export const renderStock = (levels: ReadonlyArray<StockRow>, catalog: CatalogSnapshot): Html =>
  levels.length === 0 ? html`<p>No stock is tracked.</p>` : html`<table><thead><tr><th scope="col">Product</th>
<th scope="col" class="opt">Id</th><th scope="col" class="n">On hand</th><th scope="col" class="n">Held by sessions</th>
<th scope="col" class="n">Available</th></tr></thead><tbody>${
    levels.map((level) =>
      html`<tr><td>${catalog.products.get(level.productId)?.title ?? level.productId}</td>
<td class="opt">${level.productId}</td><td class="n">${level.onHand}</td><td class="n">${level.reserved}</td>
<td class="n">${Math.max(0, level.onHand - level.reserved)}</td></tr>`
    )
  }</tbody></table>`

export const SESSION_STATUSES: ReadonlyArray<SessionStatus> = SessionStatus.literals

export const renderSessions = (
  sessions: ReadonlyArray<Session>,
  status: SessionStatus | undefined,
  catalog: CatalogSnapshot,
  showOrders: boolean
): Html =>
  html`<form method="get" action="${CONSOLE_PATH}/sessions"><label>Status <select name="status"><option value="">any</option>${
    SESSION_STATUSES.map((name) => html`<option value="${name}"${name === status && html` selected`}>${name}</option>`)
  }</select></label><button type="submit">Show</button></form>${
    sessions.length === 0 ?
      html`<p>No checkout sessions${status !== undefined && ` ${status}`}.</p>` :
      html`<table><thead><tr>
<th scope="col">Session</th><th scope="col">Status</th><th scope="col">Items</th><th scope="col" class="opt">Buyer</th>
<th scope="col" class="n">Total</th><th scope="col" class="opt">Created</th><th scope="col">Order</th></tr></thead><tbody>${
        sessions.map((session) =>
          html`<tr><td>${session.id}</td><td>${session.status}</td><td>${
            session.line_items.map((line) =>
              html`<div>${catalog.products.get(line.item.id)?.title ?? line.item.id} × ${line.item.quantity}</div>`
            )
          }</td><td class="opt">${
            session.buyer === undefined ? "–" : `${session.buyer.first_name} ${session.buyer.last_name}`
          }</td><td class="n">${
            formatAmount(session.totals.find((entry) => entry.type === "total")?.amount ?? 0, session.currency)
          }</td><td class="opt">${time(session.created_at)}</td><td>${
            session.order === undefined
              ? "–"
              : showOrders
              ? html`<a href="${orderPath(session.order.id)}">${session.order.id}</a>`
              : session.order.id
          }</td></tr>`
        )
      }</tbody></table>`
  }`
