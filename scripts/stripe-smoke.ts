/**
 * `npm run stripe:smoke`: one purchase through Stripe's test mode, end to end. With
 * `STRIPE_SECRET_KEY=sk_test_…` it starts the service on a fresh embedded store with that key,
 * grants a shared payment token for Stripe's test card, completes a checkout with it, and checks
 * at Stripe that exactly one PaymentIntent of the session succeeded, for the session's total.
 * Without a key it says it is skipped and succeeds; a live key is refused. `STRIPE_API_BASE`
 * points it elsewhere (a staging proxy, or `npm run stripe:fake`).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeCall } from "./lib/acp-client.ts"
import { dialectOf } from "./lib/agent-dialects.ts"
import { freePort, logPath, sleep, spawnNode, waitHealthy } from "./lib/processes.ts"
import { grantTestToken, paymentIntentsOf, stripeBaseOf, stripeSdk, stripeTargetFromEnv } from "./lib/stripe-agent.ts"

const API_VERSION = "2026-04-17"

const target = stripeTargetFromEnv()
if (target === undefined) {
  console.log("stripe:smoke skipped: set STRIPE_SECRET_KEY=sk_test_… (a Stripe test-mode key) to run it.")
  process.exit(0)
}
if (!/^(sk|rk)_test_/.test(target.secretKey)) {
  console.error("stripe:smoke refuses a live-mode key: it makes a real purchase. Use a test-mode key (sk_test_…).")
  process.exit(1)
}

const fail = (message: string): never => {
  throw new Error(message)
}

const dataDir = mkdtempSync(join(tmpdir(), "stripe-smoke-"))
const port = await freePort()
const server = spawnNode(
  "server",
  ["--import", "tsx", "src/main.ts"],
  {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    STRIPE_SECRET_KEY: target.secretKey,
    STRIPE_API_BASE: stripeBaseOf(target),
    LOG_LEVEL: "Warn"
  },
  port,
  logPath(dataDir, "server")
)

try {
  console.log(`stripe:smoke → Stripe at ${stripeBaseOf(target)}; the service on ${server.baseUrl}`)
  await waitHealthy(server)
  const secrets = JSON.parse(readFileSync(join(dataDir, "secrets.json"), "utf8")) as { api_key: string }
  const call = makeCall({ baseUrl: server.baseUrl, apiKey: secrets.api_key, apiVersion: API_VERSION })
  const dialect = dialectOf(API_VERSION)

  const created = await call("POST", "/checkout_sessions", dialect.createBody([{ id: "mug-ceramic", quantity: 1 }]))
  if (created.status !== 201) fail(`create answered ${created.status}: ${JSON.stringify(created.body)}`)
  let session = dialect.view(created.body)
  const option = session.options[0]?.id ?? fail("the session offers no fulfillment option")
  const updated = await call("POST", `/checkout_sessions/${session.id}`, dialect.selectOptionBody(session, option))
  if (updated.status !== 200) fail(`update answered ${updated.status}: ${JSON.stringify(updated.body)}`)
  session = dialect.view(updated.body)
  const total = session.totals.find((t) => t.type === "total")?.amount ?? fail("the session has no total")
  console.log(`  session ${session.id}: ${total} usd, status ${session.status}`)

  const sdk = stripeSdk(target)
  const token = await grantTestToken(sdk, { amount: total, currency: "usd" })
  console.log(`  granted ${token.id} (pm_card_visa, up to ${total})`)
  const completed = await call(
    "POST",
    `/checkout_sessions/${session.id}/complete`,
    dialect.stripeCompleteBody(session, token.id)
  )
  if (completed.status !== 200) fail(`complete answered ${completed.status}: ${JSON.stringify(completed.body)}`)
  const paid = dialect.view(completed.body)
  const order = paid.order ?? fail(`the session is ${paid.status}, with no order`)
  if (paid.status !== "completed") fail(`the session is ${paid.status}`)
  console.log(`  completed: order ${order.id}`)

  // Stripe's search index lags behind writes by up to about a minute.
  const deadline = Date.now() + 90_000
  let intents = await paymentIntentsOf(sdk, session.id)
  while (intents.length === 0 && Date.now() < deadline) {
    await sleep(3000)
    intents = await paymentIntentsOf(sdk, session.id)
  }
  const succeeded = intents.filter((intent) => intent.status === "succeeded")
  if (succeeded.length !== 1) {
    fail(`Stripe holds ${succeeded.length} succeeded PaymentIntents for the session (of ${intents.length})`)
  }
  const intent = succeeded[0]!
  if (intent.amount !== total || intent.currency !== "usd") {
    fail(`the PaymentIntent is for ${intent.amount} ${intent.currency}, the session's total ${total} usd`)
  }
  console.log(`  Stripe: ${intent.id} succeeded for ${intent.amount} ${intent.currency}, the only one of the session`)
  console.log("stripe:smoke passed.")
} catch (error) {
  console.error(`stripe:smoke failed: ${error instanceof Error ? error.message : String(error)}`)
  console.error(server.tail(30))
  process.exitCode = 1
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
