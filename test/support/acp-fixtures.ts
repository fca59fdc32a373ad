/**
 * A client of the checkout API that speaks only one line-items version (2026-01-30 or 2026-04-17),
 * and its request bodies: our own, adapted from the official example requests of each version
 * (`examples/<version>/examples.agentic_checkout.json`, `examples.multi_item_checkout.json`, the
 * discount-extension examples) to the demo catalog (`catalog/demo-catalog.json`): its products
 * stand for the examples' `item_123`/`item_456`, its shipping methods for their fulfillment
 * options, its card handler `card_tokenized` for theirs.
 *
 * Every POST carries a fresh `Idempotency-Key`, as a 2026-04-17 client must.
 */
import { Effect, TestClock } from "effect"
import { randomUUID } from "node:crypto"
import { DELEGATE_PATH, delegateRequestWith } from "./delegate.ts"
import { get, post, type RequestOptions, testApp } from "./http.ts"

export type LineItemsVersion = "2026-01-30" | "2026-04-17"
export const LINE_ITEMS_VERSIONS: ReadonlyArray<LineItemsVersion> = ["2026-01-30", "2026-04-17"]

export type Json = Record<string, any>

/** The merchant id of `testConfig`: allowances must name it. */
const MERCHANT_ID = "merchant_test"

/** Monday 2026-04-20, noon UTC: the clock the tests of this client run at. */
export const NOW = Date.parse("2026-04-20T12:00:00.000Z")

/** Runs `effect` against a fresh application (memory stores, demo catalog) at `NOW`. */
export const runApp = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), testApp()) as Effect.Effect<A, E, never>

// ---------------------------------------------------------------------------------------------
// Request bodies

/** Where the examples ship to (San Francisco: 7.25 % on apparel and housewares, shipping untaxed). */
export const shipTo = {
  name: "John Doe",
  line_one: "1234 Chat Road",
  line_two: "",
  city: "San Francisco",
  state: "CA",
  country: "US",
  postal_code: "94131"
}

export const fulfillmentDetails = {
  name: "John Doe",
  phone_number: "15551234567",
  email: "johndoe@example.com",
  address: shipTo
}

/** The buyer of the examples' complete request. */
export const exampleBuyer = {
  first_name: "John",
  last_name: "Smith",
  email: "johnsmith@mail.com",
  phone_number: "15552003434"
}

export const CREATE_NOTES = "Leave at front door if I'm not home."
export const UPDATE_NOTES = "Please ring doorbell twice. Leave with neighbor at #12 if no answer."
export const COMPLETE_NOTES = "Please ring doorbell twice."

/**
 * The create request of the examples, with one item without a quantity (1) and one with 2, as the
 * multi-item example has two lines. 2026-04-17 adds order notes.
 */
export const createRequest = (version: LineItemsVersion, overrides: Json = {}): Json => ({
  currency: "usd",
  line_items: [{ id: "tshirt-classic" }, { id: "mug-ceramic", quantity: 2 }],
  capabilities: {
    interventions: {
      supported: ["3ds", "biometric"],
      display_context: "webview",
      redirect_context: "in_app",
      max_redirects: 1,
      max_interaction_depth: 1
    }
  },
  fulfillment_details: fulfillmentDetails,
  ...(version === "2026-04-17" ? { order_notes: CREATE_NOTES } : {}),
  ...overrides
})

/** The update request of the examples: the express option for both items, and the buyer. */
export const updateRequest = (version: LineItemsVersion, overrides: Json = {}): Json => ({
  selected_fulfillment_options: [
    { type: "shipping", option_id: "express", item_ids: ["tshirt-classic", "mug-ceramic"] }
  ],
  buyer: exampleBuyer,
  fulfillment_details: fulfillmentDetails,
  ...(version === "2026-04-17" ? { order_notes: UPDATE_NOTES } : {}),
  ...overrides
})

export const cardPayment = (token: string): Json => ({
  handler_id: "card_tokenized",
  instrument: { type: "card", credential: { type: "spt", token } },
  billing_address: { ...shipTo, name: "John Smith" }
})

export const riskSignals = {
  ip_address: "203.0.113.7",
  user_agent: "Mozilla/5.0 (agent)",
  accept_language: "en-US",
  session_id: "sess_42"
}

export const marketingConsents = [
  { channel: "email", opted_in: true },
  { channel: "sms", opted_in: false }
]

/** The complete request of the examples, paying with `token`; 2026-04-17 adds consents and notes. */
export const completeRequest = (version: LineItemsVersion, token: string, overrides: Json = {}): Json => ({
  buyer: exampleBuyer,
  payment_data: cardPayment(token),
  risk_signals: riskSignals,
  ...(version === "2026-04-17" ? { marketing_consents: marketingConsents, order_notes: COMPLETE_NOTES } : {}),
  ...overrides
})

/** The cancel request of the examples. */
export const cancelRequest = {
  intent_trace: {
    reason_code: "shipping_cost",
    trace_summary: "User loves the item but isn't willing to pay $15 for express shipping.",
    metadata: { target_shipping_cost: 0, competitor_reference: "amazon_prime" }
  }
}

// ---------------------------------------------------------------------------------------------
// The client

export const idempotencyKey = () => `idem_${randomUUID()}`

/** Request options of this version, with a fresh Idempotency-Key unless `headers` brings one. */
const optionsOf = (version: string, options: Omit<RequestOptions, "body"> = {}) => ({
  version,
  ...options,
  headers: { "idempotency-key": idempotencyKey(), ...options.headers }
})

export const clientOf = (version: LineItemsVersion) => {
  const send = (path: string, body?: unknown, options?: Omit<RequestOptions, "body">) =>
    post(path, body, optionsOf(version, options))
  return {
    version,
    create: (body: Json, options?: Omit<RequestOptions, "body">) => send("/checkout_sessions", body, options),
    get: (id: string) => get(`/checkout_sessions/${id}`, { version }),
    update: (id: string, body: Json, options?: Omit<RequestOptions, "body">) =>
      send(`/checkout_sessions/${id}`, body, options),
    complete: (id: string, body: Json, options?: Omit<RequestOptions, "body">) =>
      send(`/checkout_sessions/${id}/complete`, body, options),
    cancel: (id: string, body?: Json, options?: Omit<RequestOptions, "body">) =>
      send(`/checkout_sessions/${id}/cancel`, body, options),
    /** Creates a session from `body` (201 expected) and returns it. */
    created: (body: Json) =>
      Effect.map(send("/checkout_sessions", body), (response) => {
        if (response.status !== 201) throw new Error(`create failed: ${response.status} ${response.text}`)
        return response.body as Json
      }),
    /** Tokenizes the delegate fixture's test card for `sessionId`, allowing `maxAmount`: the vt_ token. */
    delegate: (sessionId: string, maxAmount: number) =>
      Effect.map(
        post(
          DELEGATE_PATH,
          delegateRequestWith((request) => {
            request.allowance.checkout_session_id = sessionId
            request.allowance.merchant_id = MERCHANT_ID
            request.allowance.max_amount = maxAmount
          }),
          optionsOf(version)
        ),
        (response) => {
          if (response.status !== 201) throw new Error(`delegate failed: ${response.status} ${response.text}`)
          return response.body.id as string
        }
      )
  }
}

export type Client = ReturnType<typeof clientOf>

/** The amount of the total of type `type` in a `totals` list. */
export const amountOf = (totals: ReadonlyArray<{ type: string; amount: number }>, type: string) =>
  totals.find((total) => total.type === type)?.amount
