/** The console's carts page: the unexpired carts, newest first, and how many started a checkout. Pure. */
import type { CartOverview } from "../../carts/cart-service.ts"
import { type Html, html } from "../../shared/html.ts"
import { formatAmount } from "../../shared/money.ts"
import { time } from "./layout.ts"

export const renderCarts = (overview: CartOverview): Html =>
  html`<p role="status">${overview.total} ${overview.total === 1 ? "cart" : "carts"}; ${overview.withCheckout} became
${overview.withCheckout === 1 ? "a checkout" : "checkouts"} from the buyer's cart page.</p>${
    overview.carts.length === 0 ? html`<p>No carts.</p>` : html`<table><thead><tr><th scope="col">Cart</th>
<th scope="col">Items</th><th scope="col" class="opt">Buyer</th><th scope="col" class="n">Estimated total</th>
<th scope="col" class="n">Checkouts</th><th scope="col" class="opt">Updated</th><th scope="col" class="opt">Expires</th>
</tr></thead><tbody>${
      overview.carts.map(({ cart, estimate }) =>
        html`<tr><td>${cart.id}</td><td>${
          estimate.lines.map((line) => html`<div>${line.product?.title ?? line.item.id} × ${line.item.quantity}</div>`)
        }</td><td class="opt">${typeof cart.buyer?.["email"] === "string" ? cart.buyer["email"] : "–"}</td>
<td class="n">${formatAmount(estimate.total, estimate.currency)}</td><td class="n">${cart.checkouts}</td>
<td class="opt">${time(cart.updatedAt)}</td><td class="opt">${time(cart.expiresAt)}</td></tr>`
      )
    }</tbody></table>`
  }`
