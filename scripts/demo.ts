/**
 * A demo agent: one full purchase against a running server, each step printed readably: the
 * merchant's product feed it reads first (`lib/feed-agent.ts`) and the variant it picks there, the
 * session, its line items and totals as a table, the card token, the order, and the order events
 * the agent platform received. Without a feed (publication off, or not readable) it says so and buys
 * the catalog's T-shirts and mug instead. In 2026-04-17 the item carries the feed's price as its
 * `suggested_price` (the session shows an info message when the catalog's price differs).
 * `--item <variant id>` buys that variant of the feed rather than the first available one. Usage: `npm run demo [-- --api-version 2026-04-17]` (server on
 * BASE_URL, default http://localhost:8080; the agent key from API_KEY and the merchant key, which reads
 * the order, from MERCHANT_API_KEY, each else from DATA_DIR/secrets.json). The agent speaks the wire
 * format of the version it is given (2025-09-29 by default).
 *
 * `npm run demo -- --3ds` buys twice with 3-D Secure test cards instead (API version 2026-04-17
 * unless another with the flow is given): the challenge card, whose issuer asks the buyer for a
 * code, and the frictionless one; each complete first answers `authentication_required`, the agent
 * authenticates with the Delegate Authentication API, then completes with the result.
 *
 * `npm run demo -- --mcp` makes the same purchase with the checkout calls as MCP tool calls on
 * `/mcp` (API version 2026-04-17 unless given); it combines with `--3ds`.
 *
 * `npm run demo -- --stripe` pays with a Stripe shared payment token instead of a vault token: the
 * agent grants it with Stripe's test helper at STRIPE_API_BASE with STRIPE_SECRET_KEY (the server's
 * own values: Stripe's test mode, or `npm run stripe:fake`), and the server charges a PaymentIntent.
 */
import { API_VERSION, type CallResult, clientOptionsFromEnv, makeCall, money, tokenizeBody } from "./lib/acp-client.ts"
import { type DemoItem, dialectOf, type SessionView } from "./lib/agent-dialects.ts"
import {
  FEED_API_VERSION,
  type FeedVariant,
  pickVariant,
  readMerchantFeed,
  suggestedPriceOf
} from "./lib/feed-agent.ts"
import { makeMcpCall } from "./lib/mcp-call.ts"
import { grantTestToken, paymentIntentsOf, stripeBaseOf, stripeSdk, stripeTargetFromEnv } from "./lib/stripe-agent.ts"
import { authenticateCard } from "./lib/three-d-secure-agent.ts"

const threeDs = process.argv.includes("--3ds")
const overMcp = process.argv.includes("--mcp")
const viaStripe = process.argv.includes("--stripe")
const itemFlag = process.argv.indexOf("--item")
/** `--item <variant id>`: the feed's variant to buy (else the first available). */
const wantedItem = itemFlag >= 0 ? process.argv[itemFlag + 1] : undefined
const versionFlag = process.argv.indexOf("--api-version")
const apiVersion = versionFlag >= 0
  ? process.argv[versionFlag + 1] ?? API_VERSION
  : threeDs || overMcp || viaStripe
  ? "2026-04-17"
  : API_VERSION
if (threeDs && apiVersion < "2026-01-30") {
  console.error(`3-D Secure needs API version 2026-01-30 or later; ${apiVersion} declines cards that need it.`)
  process.exit(1)
}
const options = { ...clientOptionsFromEnv(), apiVersion }
const merchantId = process.env["MERCHANT_ID"] ?? "merchant_demo"
const restCall = makeCall(options)
/** The order routes are the merchant's: an agent key gets 403 there. */
const merchantCall = makeCall({ ...options, apiKey: options.merchantApiKey })
let call = restCall
/** The Delegate Authentication API exists in 2026-04-17 only, as the Feed API. */
const authnCall = makeCall({ ...options, apiVersion: "2026-04-17" })
const feedCall = makeCall({ ...options, apiVersion: FEED_API_VERSION })
const dialect = dialectOf(apiVersion)

const expect = (step: string, result: CallResult, status: number) => {
  if (result.status !== status) {
    console.error(`\n✗ ${step}: expected HTTP ${status}, got ${result.status}: ${JSON.stringify(result.body)}`)
    process.exit(1)
  }
}

const table = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  right: ReadonlySet<number>
) => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    "  " + cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ")
  console.log(line(headers))
  console.log("  " + widths.map((w) => "─".repeat(w)).join("  "))
  for (const row of rows) console.log(line(row))
}

const showSession = (session: SessionView) => {
  console.log(`  session ${session.id} · status ${session.status}`)
  table(
    ["item", "qty", "base", "discount", "tax", "total"],
    session.lines.map((line) => [
      line.item,
      String(line.quantity),
      money(line.base),
      line.discount > 0 ? `−${money(line.discount)}` : "",
      money(line.tax),
      money(line.total)
    ]),
    new Set([1, 2, 3, 4, 5])
  )
  console.log("")
  table(["totals", ""], session.totals.map((t) => [t.display_text ?? t.type, money(t.amount)]), new Set([1]))
  const selected = session.options.find((o) => o.id === session.selectedOptionId)
  if (selected) console.log(`\n  fulfillment: ${selected.title} (${money(selected.total)})`)
  for (const message of session.messages) {
    console.log(`  · ${message.type}${message.code ? ` ${message.code}` : ""}: ${message.content}`)
  }
}

let stepNumber = 0
const step = (title: string) => console.log(`\n${++stepNumber}. ${title}`)

interface Purchase {
  readonly items: ReadonlyArray<DemoItem>
  readonly description: string
}

/** What the agent buys without a feed: the demo catalog's items. */
const CATALOG_PURCHASE: Purchase = {
  items: [{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }],
  description: "two T-shirts and a mug"
}

const priceText = (price: FeedVariant["price"]) =>
  price === undefined
    ? ""
    : price.currency === "USD"
    ? money(price.amount)
    : `${(price.amount / 100).toFixed(2)} ${price.currency}`

/** Step 1: the merchant's feed, read as the agent; one available variant of it to buy. */
const choosePurchase = async (): Promise<Purchase> => {
  step(`Read the merchant's product feed (the agent platform's Feed API, API-Version ${FEED_API_VERSION})`)
  const feed = await readMerchantFeed({ merchant: merchantCall, agent: feedCall })
  if (!feed.found) {
    console.log(`  no feed: ${feed.reason}; buying the catalog's ${CATALOG_PURCHASE.description} instead`)
    return CATALOG_PURCHASE
  }
  const products = new Set(feed.variants.map((variant) => variant.productId)).size
  console.log(`  feed ${feed.feedId} at ${feed.apiUrl} · ${products} products, ${feed.variants.length} variants`)
  table(
    ["product", "variant", "price", "availability"],
    feed.variants.map((variant) => [
      variant.productTitle,
      variant.id,
      priceText(variant.price),
      variant.status ?? (variant.available ? "available" : "unavailable")
    ]),
    new Set([2])
  )
  const chosen = pickVariant(feed.variants, wantedItem)
  if (chosen === undefined) {
    console.log(`  no variant is available; buying the catalog's ${CATALOG_PURCHASE.description} instead`)
    return CATALOG_PURCHASE
  }
  if (wantedItem !== undefined && chosen.id !== wantedItem) {
    console.log(`  ${wantedItem} is not an available variant of the feed`)
  }
  console.log(`  buying ${chosen.id} (${chosen.title}, ${priceText(chosen.price)}) found in the feed`)
  const suggested = apiVersion >= "2026-04-17" ? suggestedPriceOf(feed.feedId, chosen, new Date()) : undefined
  if (suggested !== undefined) {
    console.log("  its feed price goes as the item's suggested_price (a different catalog price is an info message)")
  }
  return {
    items: [{ id: chosen.id, quantity: 1, ...(suggested === undefined ? {} : { suggested_price: suggested }) }],
    description: `one ${chosen.title} from the feed`
  }
}

/** Steps 2 and 3: a session for the purchase, fulfilled fastest; the agent may declare 3ds. */
const readySession = async (purchase: Purchase, declareThreeDs: boolean) => {
  step(`Create a checkout session: ${purchase.description}, for a buyer in New York`)
  const body = dialect.createBody(purchase.items)
  const created = await call(
    "POST",
    "/checkout_sessions",
    declareThreeDs ? { ...(body as object), capabilities: { interventions: { supported: ["3ds"] } } } : body
  )
  expect("create", created, 201)
  const session = dialect.view(created.body)
  showSession(session)

  step("Choose the fastest fulfillment option")
  const fastest = session.options[session.options.length - 1]
  const updated = await call(
    "POST",
    `/checkout_sessions/${session.id}`,
    dialect.selectOptionBody(session, fastest?.id ?? "")
  )
  expect("update", updated, 200)
  const ready = dialect.view(updated.body)
  showSession(ready)
  return ready
}

const totalOf = (session: SessionView) => session.totals.find((t) => t.type === "total")?.amount ?? 0

/** A 3-D Secure purchase with `card`: complete, authenticate with the issuer, complete with the result. */
const threeDsPurchase = async (purchase: Purchase, card: { readonly number: string; readonly name: string }) => {
  console.log(`\n━━ 3-D Secure, ${card.name}: card ${card.number.replace(/(\d{4})(?=\d)/g, "$1 ")}`)
  stepNumber = 1
  const session = await readySession(purchase, true)
  const amount = totalOf(session)
  step("Tokenize the card (delegated payment, allowance = the total)")
  const token = await call("POST", "/agentic_commerce/delegate_payment", {
    ...tokenizeBody(session.id, amount, "scripts/demo.ts --3ds"),
    payment_method: {
      ...tokenizeBody(session.id, amount, "").payment_method,
      number: card.number,
      display_last4: card.number.slice(-4)
    }
  })
  expect("tokenize", token, 201)
  console.log(`  token ${token.body.id}`)
  step("Complete: the issuer wants the cardholder authenticated first")
  const pending = await call("POST", `/checkout_sessions/${session.id}/complete`, dialect.completeBody(token.body.id))
  expect("complete", pending, 200)
  const metadata = pending.body.authentication_metadata
  console.log(`  status ${pending.body.status} · nothing charged, stock still held`)
  console.log(
    `  authenticate with: directory server ${metadata.directory_server} · acquirer BIN ${metadata.acquirer_details.acquirer_bin}` +
      ` (${metadata.acquirer_details.acquirer_country}) · merchant ${metadata.acquirer_details.acquirer_merchant_id}` +
      ` · preference ${metadata.flow_preference?.type ?? "none"}`
  )
  step("Authenticate with the issuer (Delegate Authentication API)")
  const authenticated = await authenticateCard(authnCall, { number: card.number, expMonth: "12", expYear: "2030" }, {
    sessionId: session.id,
    amount,
    currency: "usd",
    merchantId
  })
  for (const line of authenticated.steps) console.log(`  ${line}`)
  step("Complete again with the authentication result")
  const completed = await call("POST", `/checkout_sessions/${session.id}/complete`, {
    ...(dialect.completeBody(token.body.id) as object),
    authentication_result: authenticated.result
  })
  expect("complete with the authentication result", completed, 200)
  const paid = dialect.view(completed.body)
  console.log(
    `  status ${paid.status} · order ${paid.order?.id} · ${money(amount)} charged with the issuer's cryptogram`
  )
}

/** Steps 4 and 5: a `vt_` token of the Delegate Payment API, charged by the built-in processor. */
const payWithVaultToken = async (session: SessionView) => {
  step("Tokenize the card with the payment provider (delegated payment, allowance = the total)")
  const amount = totalOf(session)
  const token = await call(
    "POST",
    "/agentic_commerce/delegate_payment",
    tokenizeBody(session.id, amount, "scripts/demo.ts")
  )
  expect("tokenize", token, 201)
  console.log(`  token ${token.body.id} · visa •••• 4242 · up to ${money(amount)} for ${session.id} only, 15 minutes`)

  step("Complete the checkout with the token")
  const completed = await call("POST", `/checkout_sessions/${session.id}/complete`, dialect.completeBody(token.body.id))
  expect("complete", completed, 200)
  return dialect.view(completed.body)
}

/** Steps 4 and 5: a Stripe shared payment token, charged by the server as a PaymentIntent. */
const payWithStripe = async (session: SessionView) => {
  const target = stripeTargetFromEnv()
  if (target === undefined) {
    console.error(
      "--stripe needs STRIPE_SECRET_KEY (and STRIPE_API_BASE unless Stripe's own API): the server's values; " +
        "`npm run stripe:fake` prints a set for a local Stripe-compatible server"
    )
    process.exit(1)
  }
  const sdk = stripeSdk(target)
  const amount = totalOf(session)
  step(`Grant a Stripe shared payment token (${stripeBaseOf(target)}, test card visa, up to the total)`)
  const token = await grantTestToken(sdk, { amount, currency: "usd" })
  console.log(`  token ${token.id} · up to ${money(amount)} · one hour`)

  step("Complete the checkout with the shared payment token")
  const completed = await call(
    "POST",
    `/checkout_sessions/${session.id}/complete`,
    dialect.stripeCompleteBody(session, token.id)
  )
  expect("complete", completed, 200)
  for (const intent of await paymentIntentsOf(sdk, session.id)) {
    console.log(`  Stripe PaymentIntent ${intent.id} · ${intent.status} · ${money(intent.amount)} ${intent.currency}`)
  }
  return dialect.view(completed.body)
}

const main = async () => {
  console.log(`Demo agent → ${options.baseUrl} · API-Version ${apiVersion}${overMcp ? " · checkout over MCP" : ""}`)
  if (overMcp) {
    const mcp = await makeMcpCall(options, restCall)
    call = mcp.call
    console.log(`  ${options.baseUrl}/mcp offers the tools ${mcp.tools.join(", ")}`)
  }
  const purchase = await choosePurchase()
  if (threeDs) {
    await threeDsPurchase(purchase, { number: "4000002760003184", name: "challenge (the issuer asks for a code)" })
    await threeDsPurchase(purchase, { number: "4000000000003220", name: "frictionless (no buyer interaction)" })
    console.log("\nDone.")
    return
  }
  let session = await readySession(purchase, false)
  session = viaStripe ? await payWithStripe(session) : await payWithVaultToken(session)
  console.log(`  status ${session.status} · order ${session.order?.id}`)
  console.log(`  permalink ${session.order?.permalink_url}`)

  step("Read the order (merchant)")
  const order = await merchantCall("GET", `/orders/${session.order?.id}`)
  expect("read order", order, 200)
  table(
    ["order line", "ordered", "total"],
    (order.body.line_items as Array<{ title: string; quantity: { ordered: number }; total: number }>).map((line) => [
      line.title,
      String(line.quantity.ordered),
      money(line.total)
    ]),
    new Set([1, 2])
  )
  console.log(`  status ${order.body.status}`)

  step("Order events received by the agent platform (signed webhooks)")
  let received: CallResult | undefined
  for (let i = 0; i < 50; i++) {
    received = await call("GET", `/agentic_checkout/orders/${session.order?.id}`)
    if (received.status === 200) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  if (received?.status !== 200) {
    console.log(`  none yet (HTTP ${received?.status}); is WEBHOOK_URL pointing elsewhere?`)
  } else {
    const events = (received.body.events ?? []) as Array<
      { type?: string; request_id?: string; status?: string; received_at?: string }
    >
    console.log(`  latest order status seen by the platform: ${received.body.order?.status ?? received.body.status}`)
    if (events.length > 0) {
      table(
        ["event", "request id", "status", "received"],
        events.map((e) => [e.type ?? "", e.request_id ?? "", e.status ?? "", e.received_at ?? ""]),
        new Set()
      )
    } else {
      console.log(`  ${JSON.stringify(received.body).slice(0, 300)}`)
    }
  }
  console.log("\nDone.")
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
