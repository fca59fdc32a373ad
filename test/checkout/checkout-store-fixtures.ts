/**
 * Values the `CheckoutStore` contract's cases share: sessions, payment attempts, ids and times.
 */
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { CheckoutStore, type CheckoutStoreService } from "../../src/checkout/checkout-store.ts"
import { type PaymentAttempt } from "../../src/checkout/payment/attempt.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { makeOrder } from "../../src/orders/model/order-from-checkout.ts"

export const attemptOf = (sessionId: string, sequence: number): PaymentAttempt => ({
  sessionId,
  sequence,
  idempotencyKey: `${sessionId}:${sequence}`,
  amount: 4883,
  currency: "usd",
  credentialRef: "vt_abc",
  state: "pending",
  chargeId: undefined,
  createdAt: 1_000 * sequence,
  updatedAt: 1_000 * sequence
})

/** The latest payment attempt of a stored session, as a payment step sees it. */
export const latestAttemptOf = (sessionId: string) =>
  Effect.flatMap(CheckoutStore, (store) =>
    store.transaction(store.lockSessionForPayment(sessionId)).pipe(
      Effect.map((found) => Option.flatMap(found, (payment) => payment.latestAttempt))
    ))

/** A stored session with its version, read without locking (None when there is none). */
export const versionedSession = (store: CheckoutStoreService, id: string) =>
  Effect.map(store.readSessionForPayment(id), Option.map(({ session, version }) => ({ session, version })))

export const uid = (prefix: string) => `${prefix}_${randomUUID().replaceAll("-", "")}`

export const FAR_FUTURE = "2099-01-01T00:00:00.000Z"

export const iso = (epochMillis: number) => new Date(epochMillis).toISOString()

/** A complete session satisfying the `Session` schema (every optional part present). */
export const makeSession = (id: string, overrides: Partial<Session> = {}): Session => ({
  id,
  status: "ready_for_payment",
  currency: "usd",
  line_items: [
    {
      id: `li_${id}`,
      item: { id: "prod_tshirt", quantity: 2 },
      base_amount: 5000,
      discount: 500,
      subtotal: 4500,
      tax: 383,
      total: 4883
    }
  ],
  fulfillment_options: [
    {
      type: "shipping",
      id: "ship_standard",
      title: "Standard",
      subtitle: "3-5 business days",
      carrier: "USPS",
      earliest_delivery_time: "2026-02-03T12:00:00.000Z",
      latest_delivery_time: "2026-02-05T12:00:00.000Z",
      subtotal: 500,
      tax: 0,
      total: 500
    },
    { type: "digital", id: "digital", title: "Email", subtitle: "Instant", subtotal: 0, tax: 0, total: 0 }
  ],
  totals: [
    { type: "items_base_amount", display_text: "Items", amount: 5000 },
    { type: "items_discount", display_text: "Discount", amount: 500 },
    { type: "subtotal", display_text: "Subtotal", amount: 4500 },
    { type: "fulfillment", display_text: "Shipping", amount: 500 },
    { type: "tax", display_text: "Tax", amount: 383 },
    { type: "total", display_text: "Total", amount: 5383 }
  ],
  messages: [
    { type: "info", param: "$.line_items[0]", content_type: "plain", content: "Ships soon — ünïcödé ✓" },
    { type: "error", code: "missing", param: "$.buyer", content_type: "markdown", content: "**Need** \"quotes\"" }
  ],
  links: [{ type: "terms_of_use", url: "https://merchant.example/terms" }],
  buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", phone_number: "+1 555 0100" },
  capabilities: {
    payment: {
      handlers: [
        {
          id: "card",
          name: "Card",
          version: "1",
          spec: "https://psp.example/spec",
          requires_delegate_payment: true,
          requires_pci_compliance: false,
          psp: "psp.example",
          config_schema: "https://psp.example/config.json",
          instrument_schemas: ["https://psp.example/card.json"],
          config: { merchant: "m_1", nested: { list: [1, 2, null], flag: true } }
        }
      ]
    },
    interventions: { supported: ["3ds"], required: [] },
    extensions: [{ name: "discount", extends: ["checkout_session"], spec: "https://acp.example/discount" }]
  },
  fulfillment_address: {
    name: "Ada Lovelace",
    line_one: "1 Main Street",
    line_two: "Apt 2",
    city: "Springfield",
    state: "IL",
    country: "US",
    postal_code: "62701"
  },
  fulfillment_option_id: "ship_standard",
  created_at: "2026-01-30T12:00:00.000Z",
  updated_at: "2026-01-30T12:00:00.000Z",
  expires_at: FAR_FUTURE,
  items: [{ id: "prod_tshirt", quantity: 2 }],
  ...overrides
})

export class Boom {
  readonly _tag = "Boom"
}

export const levelsOf = (productIds: ReadonlyArray<string>, now: number) =>
  Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(now)).pipe(
    Effect.map((levels) => levels.filter((level) => productIds.includes(level.productId)))
  )

/** The order a completion of `session` makes (a new order id, the session's lines and totals). */
export const orderFor = (session: Session) =>
  makeOrder({
    id: uid("ord"),
    checkoutSessionId: session.id,
    permalinkUrl: "https://merchant.example/orders/1",
    lineItems: session.line_items.map((line) => ({ ...line, title: "T-shirt", kind: "physical" as const })),
    totals: session.totals
  })
