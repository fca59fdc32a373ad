/**
 * CPU cost of one request through the whole HTTP application, in-process: no sockets, no
 * database (in-memory stores), so what is measured is our code and the framework's per-request
 * work (middleware, auth, schema decode/encode, reducer, logging). The in-memory checkout store
 * copies its maps on the first write of each transaction, so create/update/flow figures include a
 * cost that grows with the number of sessions and that the SQL stores do not have. Used to A/B hot-path changes
 * quickly; `npm run bench` measures the real thing.
 *
 * Usage: `node --import tsx scripts/request-cost.ts [healthz|get|create|update|flow] [iterations]`
 * (default: every scenario, 3000 iterations each, after a warm-up).
 * Env: LOG_LEVEL (default Info, like the server; the access log goes to /dev/null here).
 */
import { HttpApp } from "@effect/platform"
import { Config, Effect, Either, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { HttpAppService } from "../src/app/http-app.ts"
import { Catalog, DEMO_CATALOG_FILE, parseCatalog } from "../src/catalog/catalog-service.ts"
import { testApp } from "../test/support/http.ts"
import { address, buyer, paymentBody, tokenizeBody } from "./lib/acp-client.ts"

const API_KEY = "sk_cost_key"
const API_VERSION = "2025-09-29"
const scenarios = process.argv[2] !== undefined ? [process.argv[2]] : ["get", "create", "update", "flow"]
const iterations = Number(process.argv[3] ?? "3000")

// Read as the server reads it (any case, `Warn` included).
const level = Effect.runSync(Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)))
const quietLogger = Logger.replace(Logger.defaultLogger, Logger.map(Logger.logfmtLogger, () => undefined))

/** The demo catalog with a stock no run exhausts. */
const catalogFile = JSON.parse(readFileSync(DEMO_CATALOG_FILE, "utf8"))
for (const product of catalogFile.products) product.stock = 1e9
const catalog = Either.getOrThrow(parseCatalog(DEMO_CATALOG_FILE, JSON.stringify(catalogFile)))

const runtime = ManagedRuntime.make(
  testApp({
    config: { apiKeys: [Redacted.make(API_KEY)], delegateRateLimitPerMinute: 1e9, merchantId: "merchant_demo" },
    catalog: Layer.succeed(Catalog, catalog)
  }).pipe(
    Layer.provideMerge(Layer.mergeAll(quietLogger, Logger.minimumLogLevel(level)))
  )
)

const app = await runtime.runPromise(HttpAppService)
const handler = HttpApp.toWebHandlerRuntime(await runtime.runtime())(app as HttpApp.Default<never, never>)

const call = async (method: string, path: string, body?: unknown) => {
  const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}`, "api-version": API_VERSION }
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await handler(
    new Request(`http://acp.test${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
  )
  const json = (await response.json()) as any
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

const items = [{ id: "tshirt-classic", quantity: 1 }, { id: "mug-ceramic", quantity: 2 }]
const createBody = { items, buyer, fulfillment_address: address }

const steps: Record<string, () => Promise<() => Promise<unknown>>> = {
  get: async () => {
    const session = await call("POST", "/checkout_sessions", createBody)
    return () => call("GET", `/checkout_sessions/${session.id}`)
  },
  healthz: async () => () => call("GET", "/healthz"),
  create: async () => () => call("POST", "/checkout_sessions", createBody),
  update: async () => {
    const session = await call("POST", "/checkout_sessions", createBody)
    const options = session.fulfillment_options.map((o: { id: string }) => o.id)
    let i = 0
    return () =>
      call("POST", `/checkout_sessions/${session.id}`, { fulfillment_option_id: options[i++ % options.length] })
  },
  flow: async () => async () => {
    const session = await call("POST", "/checkout_sessions", createBody)
    const updated = await call("POST", `/checkout_sessions/${session.id}`, {
      fulfillment_option_id: session.fulfillment_options[0].id
    })
    const total = updated.totals.find((t: { type: string }) => t.type === "total").amount
    const token = await call(
      "POST",
      "/agentic_commerce/delegate_payment",
      tokenizeBody(session.id, total, "4242424242424242")
    )
    return call("POST", `/checkout_sessions/${session.id}/complete`, paymentBody(token.id))
  }
}

for (const name of scenarios) {
  const step = await steps[name]!()
  for (let i = 0; i < Math.min(500, iterations); i++) await step()
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < iterations; i++) await step()
  const elapsed = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  console.log(
    `${name.padEnd(7)} ${(elapsed / iterations).toFixed(3)} ms wall, ` +
      `${((cpu.user + cpu.system) / 1000 / iterations).toFixed(3)} ms CPU per ${
        name === "flow" ? "checkout" : "request"
      } ` +
      `(${iterations} iterations, LOG_LEVEL ${level.label})`
  )
}
await runtime.dispose()
