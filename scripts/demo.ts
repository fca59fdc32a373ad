/**
 * A demo agent: one full purchase against a running server, each step printed readably: the
 * session, its line items and totals as a table, the card token, the order, and the order events
 * the agent platform received. Usage: `npm run demo [-- --api-version 2026-04-17]` (server on
 * BASE_URL, default http://localhost:8080; API key from API_KEY or DATA_DIR/secrets.json). The agent
 * speaks the wire format of the version it is given (2025-09-29 by default).
 */
import { API_VERSION, type CallResult, clientOptionsFromEnv, makeCall, money, tokenizeBody } from "./lib/acp-client.ts"
import { dialectOf, type SessionView } from "./lib/agent-dialects.ts"

const versionFlag = process.argv.indexOf("--api-version")
const apiVersion = versionFlag >= 0 ? process.argv[versionFlag + 1] ?? API_VERSION : API_VERSION
const options = { ...clientOptionsFromEnv(), apiVersion }
const call = makeCall(options)
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

const step = (n: number, title: string) => console.log(`\n${n}. ${title}`)

const main = async () => {
  console.log(`Demo agent → ${options.baseUrl} · API-Version ${apiVersion}`)

  step(1, "Create a checkout session: two T-shirts and a mug, shipped to New York")
  const created = await call(
    "POST",
    "/checkout_sessions",
    dialect.createBody([{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }])
  )
  expect("create", created, 201)
  let session = dialect.view(created.body)
  showSession(session)

  step(2, "Choose the fastest shipping option")
  const fastest = session.options[session.options.length - 1]
  const updated = await call(
    "POST",
    `/checkout_sessions/${session.id}`,
    dialect.selectOptionBody(session, fastest?.id ?? "")
  )
  expect("update", updated, 200)
  session = dialect.view(updated.body)
  showSession(session)

  step(3, "Tokenize the card with the payment provider (delegated payment, allowance = the total)")
  const amount = session.totals.find((t) => t.type === "total")?.amount ?? 0
  const token = await call(
    "POST",
    "/agentic_commerce/delegate_payment",
    tokenizeBody(session.id, amount, "scripts/demo.ts")
  )
  expect("tokenize", token, 201)
  console.log(`  token ${token.body.id} · visa •••• 4242 · up to ${money(amount)} for ${session.id} only, 15 minutes`)

  step(4, "Complete the checkout with the token")
  const completed = await call("POST", `/checkout_sessions/${session.id}/complete`, dialect.completeBody(token.body.id))
  expect("complete", completed, 200)
  session = dialect.view(completed.body)
  console.log(`  status ${session.status} · order ${session.order?.id}`)
  console.log(`  permalink ${session.order?.permalink_url}`)

  step(5, "Read the order (merchant)")
  const order = await call("GET", `/orders/${session.order?.id}`)
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

  step(6, "Order events received by the agent platform (signed webhooks)")
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
