/**
 * A small ACP client for the scripts (agent, demo, bench): where the server is, the API keys (the
 * agent's for checkout and delegate payment, the merchant's for the order routes), one JSON call, and the request bodies of a purchase (buyer, address, card tokenization, payment).
 */
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"

/** The version the scripts speak unless told otherwise (the interface document's format). */
export const API_VERSION = "2025-09-29"

export interface ClientOptions {
  readonly baseUrl: string
  readonly apiKey: string
  /** The `API-Version` of every call; 2025-09-29 unless given. */
  readonly apiVersion?: string
}

export interface EnvClientOptions extends ClientOptions {
  /** The merchant key (`MERCHANT_API_KEYS`), for the order routes: `apiKey` is an agent key. */
  readonly merchantApiKey: string
}

/**
 * BASE_URL (default http://localhost:8080), the agent key from API_KEY and the merchant key from
 * MERCHANT_API_KEY, each else from DATA_DIR/secrets.json (where a development server keeps the ones it generated).
 */
export const clientOptionsFromEnv = (): EnvClientOptions => {
  const baseUrl = (process.env["BASE_URL"] ?? "http://localhost:8080").replace(/\/+$/, "")
  const file = join(process.env["DATA_DIR"] ?? "./data", "secrets.json")
  let stored: Record<string, unknown> | undefined
  const key = (variable: string, name: string): string => {
    const given = process.env[variable]
    if (given !== undefined) return given
    stored ??= JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
    const value = stored[name]
    if (typeof value !== "string") throw new Error(`No ${name} in ${file}: set ${variable}`)
    return value
  }
  return { baseUrl, apiKey: key("API_KEY", "api_key"), merchantApiKey: key("MERCHANT_API_KEY", "merchant_api_key") }
}

export interface CallResult {
  readonly status: number

  readonly body: any
}

export type Call = (method: string, path: string, body?: unknown) => Promise<CallResult>

/**
 * One JSON request with the bearer key and API version; the body is parsed when it is JSON. Every
 * POST carries a fresh Idempotency-Key (required from 2026-04-17 on).
 */
export const makeCall = (options: ClientOptions): Call => async (method, path, body) => {
  const response = await fetch(options.baseUrl + path, {
    method,
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      "api-version": options.apiVersion ?? API_VERSION,
      ...(method === "POST" ? { "idempotency-key": randomUUID() } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {})
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await response.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: response.status, body: parsed }
}

export interface Totals {
  readonly type: string
  readonly display_text?: string
  readonly amount: number
}

export interface Session {
  readonly id: string
  readonly status: string
  readonly currency: string
  readonly line_items: ReadonlyArray<{
    readonly id: string
    readonly item: { readonly id: string; readonly quantity: number }
    readonly base_amount: number
    readonly discount: number
    readonly subtotal: number
    readonly tax: number
    readonly total: number
  }>
  readonly totals: ReadonlyArray<Totals>
  readonly fulfillment_option_id?: string
  readonly fulfillment_options: ReadonlyArray<{ readonly id: string; readonly title: string; readonly total: number }>
  readonly order?: { readonly id: string; readonly permalink_url: string }
  readonly messages: ReadonlyArray<{ readonly type: string; readonly code?: string; readonly content: string }>
}

export const buyer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }

export const address = {
  name: "Ada Lovelace",
  line_one: "1 Main Street",
  city: "New York",
  state: "NY",
  country: "US",
  postal_code: "10001"
}

export const totalOf = (session: Pick<Session, "totals">): number =>
  session.totals.find((t) => t.type === "total")?.amount ?? 0

export const money = (amount: number) => `$${(amount / 100).toFixed(2)}`

/** The delegate payment request tokenizing the 4242 test card for one session, limited to `amount`. */
export const tokenizeBody = (sessionId: string, amount: number, source: string) => ({
  payment_method: {
    type: "card",
    card_number_type: "fpan",
    number: "4242424242424242",
    exp_month: "12",
    exp_year: "2030",
    cvc: "123",
    display_card_funding_type: "credit",
    display_brand: "visa",
    display_last4: "4242",
    metadata: {}
  },
  allowance: {
    reason: "one_time",
    max_amount: amount,
    currency: "usd",
    checkout_session_id: sessionId,
    merchant_id: process.env["MERCHANT_ID"] ?? "merchant_demo",
    expires_at: new Date(Date.now() + 15 * 60_000).toISOString()
  },
  risk_signals: [{ type: "card_testing", score: 1, action: "authorized" }],
  metadata: { agent: source }
})

/** The `complete` body paying with a `vt_` token through the default card handler. */
export const paymentBody = (token: string) => ({
  payment_data: {
    handler_id: "card_tokenized",
    instrument: { type: "card", credential: { type: "spt", token } }
  }
})
