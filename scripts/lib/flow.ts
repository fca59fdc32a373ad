/**
 * The full checkout flow as a load: N concurrent agent loops, each repeating create (one or two
 * random products of the catalog, buyer, address) → update (select a fulfillment option) →
 * tokenize the card (or, with `stripe`, a Stripe shared payment token granted by the agent
 * platform) → complete, for a fixed time. Requests go round-robin over `baseUrls` (several processes on one database).
 * Each agent holds one keep-alive connection per server (`HttpConnection`: under half the load
 * side's CPU per checkout of `node:http`'s client, which costs half of `fetch`'s): the agents share
 * a core with PostgreSQL, so what they spend is taken from the database, and at one agent it is on
 * the path of every request.
 * In the interface document's format (2025-09-29, no Idempotency-Key, as agents of that version
 * send), or in another version's (`apiVersion`; from 2026-04-17 on every POST carries a fresh
 * Idempotency-Key, which that version requires).
 */
import { randomUUID } from "node:crypto"
import Stripe from "stripe"
import { API_VERSION, tokenizeBody } from "./acp-client.ts"
import { dialectOf } from "./agent-dialects.ts"
import { HttpConnection } from "./http-connection.ts"

export interface FlowStats {
  readonly agents: number
  readonly durationSeconds: number
  readonly requests: number
  readonly checkouts: number
  readonly errors: number
  readonly serverErrors: number
  readonly statusCounts: Record<string, number>
  readonly errorSamples: ReadonlyArray<string>
  /** Per request, milliseconds. */
  readonly latencies: Float64Array
  /** Per completed checkout (4 requests), milliseconds. */
  readonly checkoutLatencies: Float64Array
}

export const FLOW_ITEMS = [{ id: "tshirt-classic", quantity: 1 }, { id: "mug-ceramic", quantity: 2 }] as const

/** The demo catalog's products (the bench catalog gives each a large stock). */
const FLOW_PRODUCTS = [
  "tshirt-classic",
  "mug-ceramic",
  "hoodie-zip",
  "print-limited",
  "ebook-field-guide",
  "gift-card-50"
]

/** One or two distinct random products, 1-3 of each: checkouts spread over the catalog like a shop's. */
const randomItems = () => {
  const first = Math.floor(Math.random() * FLOW_PRODUCTS.length)
  const second = Math.floor(Math.random() * FLOW_PRODUCTS.length)
  const ids = second === first ? [first] : [first, second]
  return ids.map((i) => ({ id: FLOW_PRODUCTS[i]!, quantity: 1 + Math.floor(Math.random() * 3) }))
}

class UnexpectedStatus extends Error {}

export const runFlow = async (options: {
  readonly baseUrls: ReadonlyArray<string>
  readonly apiKey: string
  readonly agents: number
  readonly durationMillis: number
  /** The agents' API version; default 2025-09-29. */
  readonly apiVersion?: string
  /**
   * Pay with Stripe shared payment tokens granted at this Stripe-compatible server (the agent
   * platform's call, not counted as a request to ours) instead of the vault's tokens.
   */
  readonly stripe?: { readonly base: string; readonly secretKey: string }
}): Promise<FlowStats> => {
  const apiVersion = options.apiVersion ?? API_VERSION
  const dialect = dialectOf(apiVersion)
  const keyed = apiVersion >= "2026-04-17"
  const fixedHeaders = {
    authorization: `Bearer ${options.apiKey}`,
    "api-version": apiVersion,
    "content-type": "application/json"
  }
  const latencies: Array<number> = []
  const checkoutLatencies: Array<number> = []
  const statusCounts: Record<string, number> = {}
  const errorSamples: Array<string> = []
  let requests = 0
  let checkouts = 0
  let errors = 0
  let serverErrors = 0
  let next = 0
  const deadline = Date.now() + options.durationMillis

  const opened: Array<HttpConnection> = []
  /** An agent's POST on its own connection to the next server in turn. */
  const request = async (
    connections: ReadonlyArray<HttpConnection>,
    path: string,
    body: string,
    expected: number
  ) => {
    const connection = connections[next++ % connections.length]!
    const started = performance.now()
    const headers = keyed ? { ...fixedHeaders, "idempotency-key": randomUUID() } : fixedHeaders
    const { status, text } = await connection.request("POST", path, headers, body)
    latencies.push(performance.now() - started)
    requests++
    statusCounts[status] = (statusCounts[status] ?? 0) + 1
    if (status >= 500) serverErrors++
    if (status !== expected) {
      throw new UnexpectedStatus(
        `POST ${path.replace(/cs_[A-Za-z0-9_]+/, "cs_…")}: ${status} ${text.slice(0, 200)}`
      )
    }
    return JSON.parse(text)
  }

  const stripe = options.stripe
  const stripeHeaders = stripe === undefined ? {} : {
    authorization: `Bearer ${stripe.secretKey}`,
    "stripe-version": Stripe.API_VERSION,
    "content-type": "application/x-www-form-urlencoded"
  }

  const agent = async () => {
    const connections = options.baseUrls.map((base) => new HttpConnection(base))
    opened.push(...connections)
    const post = (path: string, body: string, expected: number) => request(connections, path, body, expected)
    const stripeConnection = stripe === undefined ? undefined : new HttpConnection(stripe.base)
    if (stripeConnection !== undefined) opened.push(stripeConnection)
    /** The complete request's body: a vault token from our Delegate Payment API, or a Stripe granted token. */
    const paymentFor = async (session: ReturnType<typeof dialect.view>, total: number): Promise<string> => {
      if (stripeConnection === undefined) {
        const token = await post(
          "/agentic_commerce/delegate_payment",
          JSON.stringify(tokenizeBody(session.id, total, "scripts/bench.ts")),
          201
        )
        return JSON.stringify(dialect.completeBody(token.id))
      }
      const granted = await stripeConnection.request(
        "POST",
        "/v1/test_helpers/shared_payment/granted_tokens",
        { ...stripeHeaders, "idempotency-key": randomUUID() },
        `payment_method=pm_card_visa&usage_limits[currency]=usd&usage_limits[max_amount]=${total}`
      )
      if (granted.status !== 200) {
        throw new UnexpectedStatus(`Stripe grant: ${granted.status} ${granted.text.slice(0, 200)}`)
      }
      return JSON.stringify(dialect.stripeCompleteBody(session, JSON.parse(granted.text).id))
    }
    while (Date.now() < deadline) {
      const started = performance.now()
      try {
        const createBody = JSON.stringify(dialect.createBody(randomItems()))
        const session = dialect.view(await post("/checkout_sessions", createBody, 201))
        // The agent picks the last offered option (express when shipping, else the digital one).
        const selectBody = JSON.stringify(dialect.selectOptionBody(session, session.options.at(-1)?.id ?? ""))
        const ready = dialect.view(await post(`/checkout_sessions/${session.id}`, selectBody, 200))
        if (ready.status !== "ready_for_payment") throw new UnexpectedStatus(`update: session is ${ready.status}`)
        const total = ready.totals.find((t) => t.type === "total")?.amount ?? 0
        const payment = await paymentFor(ready, total)
        const completed = dialect.view(await post(`/checkout_sessions/${session.id}/complete`, payment, 200))
        if (completed.status !== "completed" || completed.order?.id === undefined) {
          throw new UnexpectedStatus(`complete: session is ${completed.status}`)
        }
        checkouts++
        checkoutLatencies.push(performance.now() - started)
      } catch (error) {
        errors++
        if (!(error instanceof UnexpectedStatus)) statusCounts["network"] = (statusCounts["network"] ?? 0) + 1
        if (errorSamples.length < 5) errorSamples.push(error instanceof Error ? error.message : String(error))
      }
    }
  }

  const started = Date.now()
  await Promise.all(Array.from({ length: options.agents }, agent))
  for (const connection of opened) connection.close()
  return {
    agents: options.agents,
    durationSeconds: (Date.now() - started) / 1000,
    requests,
    checkouts,
    errors,
    serverErrors,
    statusCounts,
    errorSamples,
    latencies: Float64Array.from(latencies),
    checkoutLatencies: Float64Array.from(checkoutLatencies)
  }
}

/** The p-th percentile (0-100) of the values, by nearest rank. */
export const percentile = (values: Float64Array, p: number): number => {
  if (values.length === 0) return 0
  const sorted = Float64Array.from(values).sort()
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}
