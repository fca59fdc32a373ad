/**
 * The console's feed page: the publication of the merchant's products to the agent's Feed API
 * (`FEED_API_URL`), its counts, the products waiting and dead-lettered with their last error, and the
 * forms that push every product now and retry the dead letters. Pure.
 */
import type { PushState } from "../../feeds/feed-publication-store.ts"
import type { PublicationStatus } from "../../feeds/feed-publisher.ts"
import { type Html, html } from "../../shared/html.ts"
import { CONSOLE_PATH } from "./cookies.ts"
import { csrfField, time } from "./layout.ts"
import { productPath } from "./product-pages.ts"

export const FEED_PATH = `${CONSOLE_PATH}/feed`

/** Rows shown per table; the rest are counted. */
const SHOWN = 100

export const renderFeedOff = (): Html =>
  html`<p><strong>Nothing is published</strong>: no agent's Feed API is configured
(<code>FEED_API_URL</code> is not set).</p>
<p>Set <code>FEED_API_URL</code>, <code>FEED_API_KEY</code> and <code>FEED_TARGET_COUNTRY</code> and restart to
publish the products to an agent platform's Feed API. The file form of the feed stays available without them:
<code>GET /feed-publication/products</code>, <code>npm run feed:export</code>.</p>`

const stateTable = (states: ReadonlyArray<PushState>, dead: boolean, label: string): Html =>
  html`<table aria-label="${label}"><thead><tr><th scope="col">Product</th><th scope="col" class="n">Failed attempts</th>
<th scope="col" class="opt">${dead ? "Dead-lettered" : "Next attempt"}</th><th scope="col" class="opt">Last pushed</th>
<th scope="col">Last error</th></tr></thead><tbody>${
    states.slice(0, SHOWN).map((state) =>
      html`<tr><td><a href="${
        productPath(state.productId)
      }">${state.productId}</a></td><td class="n">${state.attempts}</td>
<td class="opt">${
        dead ? time(state.deadAt) : state.nextAttemptAt === undefined ? "now" : time(state.nextAttemptAt)
      }</td>
<td class="opt">${time(state.pushedAt)}</td><td>${state.lastError ?? "–"}</td></tr>`
    )
  }</tbody></table>${states.length > SHOWN && html`<p>and ${states.length - SHOWN} more.</p>`}`

export const renderFeed = (status: PublicationStatus, csrfToken: string): Html =>
  html`<dl><dt>Feed API</dt><dd>${status.apiUrl}</dd><dt>Feed</dt><dd>${
    status.feedId ?? "not created yet: the next push creates it"
  }</dd><dt>Products</dt><dd>${status.products}</dd><dt>Published in their current form</dt><dd>${status.published}</dd>
<dt>Waiting to be pushed</dt><dd>${status.pending.length}</dd><dt>Dead-lettered</dt><dd>${status.dead.length}</dd></dl>
<form method="post" action="${FEED_PATH}/push" class="inline">${
    csrfField(csrfToken)
  }<button type="submit">Push all now</button></form>
<form method="post" action="${FEED_PATH}/retry" class="inline">${
    csrfField(csrfToken)
  }<button type="submit">Retry dead letters</button></form>
<p>Changed products are pushed within a second of the change, and every minute what is due again; a failed push is
retried with backoff and dead-lettered after ten attempts, or at once when the Feed API refuses the product.</p>
<section aria-labelledby="dead"><h2 id="dead">Dead-lettered</h2>${
    status.dead.length === 0
      ? html`<p>None.</p>`
      : html`<p>Not pushed again until retried.</p>${stateTable(status.dead, true, "Dead-lettered products")}`
  }</section>
<section aria-labelledby="pending"><h2 id="pending">Waiting to be pushed</h2>${
    status.pending.length === 0
      ? html`<p>None: every product is at the Feed API in its current form.</p>`
      : stateTable(status.pending, false, "Products waiting to be pushed")
  }</section>`
