/**
 * How an agent speaks each wire format of the checkout API, for the scripts: the request bodies of a
 * purchase and a plain view of a session response. 2025-09-29 is the interface document's format;
 * 2026-01-30 and 2026-04-17 the line-items format (`line_items`, `currency`, `capabilities`,
 * `fulfillment_details`, `selected_fulfillment_options`, `payment_data {handler_id, instrument}`).
 */
import { address, buyer } from "./acp-client.ts"

/** A session as the scripts show it, whatever the format. */
export interface SessionView {
  readonly id: string
  readonly status: string
  readonly lines: ReadonlyArray<
    { item: string; quantity: number; base: number; discount: number; tax: number; total: number }
  >
  readonly totals: ReadonlyArray<{ readonly type: string; readonly display_text?: string; readonly amount: number }>
  readonly options: ReadonlyArray<
    { readonly id: string; readonly type: string; readonly title: string; readonly total: number }
  >
  readonly selectedOptionId: string | undefined
  readonly messages: ReadonlyArray<{ readonly type: string; readonly code?: string; readonly content: string }>
  readonly order: { readonly id: string; readonly permalink_url: string } | undefined
  /** The payment handlers the session offers (none shown in 2025-09-29). */
  readonly handlers: ReadonlyArray<{ readonly id: string; readonly psp: string }>
}

/** An item to buy; `suggested_price` (2026-04-17 only) is the price the agent saw in the merchant's feed. */
export interface DemoItem {
  readonly id: string
  readonly quantity: number
  readonly suggested_price?: unknown
}

export interface Dialect {
  readonly createBody: (items: ReadonlyArray<DemoItem>) => unknown
  readonly selectOptionBody: (session: SessionView, optionId: string) => unknown
  readonly completeBody: (token: string) => unknown
  /** Paying with a Stripe shared payment token through the session's handler whose psp is `stripe`. */
  readonly stripeCompleteBody: (session: SessionView, token: string) => unknown
  readonly view: (body: any) => SessionView
}

const totalOfList = (totals: ReadonlyArray<{ type: string; amount: number }>, type: string) =>
  totals.find((t) => t.type === type)?.amount ?? 0

const documentFormat: Dialect = {
  createBody: (items) => ({ items, buyer, fulfillment_address: address }),
  selectOptionBody: (_session, optionId) => ({ fulfillment_option_id: optionId }),
  completeBody: (token) => ({
    payment_data: { handler_id: "card_tokenized", instrument: { type: "card", credential: { type: "spt", token } } }
  }),
  view: (body) => ({
    id: body.id,
    status: body.status,
    lines: body.line_items.map((line: any) => ({
      item: line.item.id,
      quantity: line.item.quantity,
      base: line.base_amount,
      discount: line.discount,
      tax: line.tax,
      total: line.total
    })),
    totals: body.totals,
    options: body.fulfillment_options.map((o: any) => ({ id: o.id, type: o.type, title: o.title, total: o.total })),
    selectedOptionId: body.fulfillment_option_id,
    messages: body.messages,
    order: body.order,
    handlers: []
  }),
  // The interface document's shape names the provider; the token's prefix tells Stripe's from the vault's.
  stripeCompleteBody: (_session, token) => ({ payment_data: { token, provider: "stripe" } })
}

const stripeHandlerOf = (session: SessionView): string => {
  const handler = session.handlers.find((h) => h.psp === "stripe")
  if (handler === undefined) {
    throw new Error(
      `the session offers no Stripe payment handler (${session.handlers.map((h) => h.id).join(", ")}); ` +
        "is the server started with STRIPE_SECRET_KEY?"
    )
  }
  return handler.id
}

const lineItemsFormat: Dialect = {
  createBody: (items) => ({
    line_items: items,
    currency: "usd",
    capabilities: { interventions: { supported: [] } },
    fulfillment_details: { name: address.name, email: buyer.email, address }
  }),
  selectOptionBody: (session, optionId) => ({
    buyer,
    selected_fulfillment_options: [{
      type: session.options.find((o) => o.id === optionId)?.type ?? "shipping",
      option_id: optionId,
      item_ids: session.lines.map((line) => line.item)
    }]
  }),
  completeBody: (token) => ({
    payment_data: { handler_id: "card_tokenized", instrument: { type: "card", credential: { type: "spt", token } } },
    risk_signals: { user_agent: "scripts/demo.ts" }
  }),
  view: (body) => ({
    id: body.id,
    status: body.status,
    lines: body.line_items.map((line: any) => ({
      item: line.item.id,
      quantity: line.quantity,
      base: totalOfList(line.totals, "items_base_amount"),
      discount: totalOfList(line.totals, "discount"),
      tax: totalOfList(line.totals, "tax"),
      total: totalOfList(line.totals, "total")
    })),
    totals: body.totals,
    options: body.fulfillment_options.map((o: any) => ({
      id: o.id,
      type: o.type,
      title: o.title,
      total: totalOfList(o.totals, "total")
    })),
    selectedOptionId: body.selected_fulfillment_options?.[0]?.option_id,
    messages: body.messages,
    order: body.order,
    handlers: (body.capabilities?.payment?.handlers ?? []).map((h: any) => ({ id: h.id, psp: h.psp }))
  }),
  stripeCompleteBody: (session, token) => ({
    payment_data: {
      handler_id: stripeHandlerOf(session),
      instrument: { type: "card", credential: { type: "spt", token } }
    },
    risk_signals: { user_agent: "scripts/demo.ts --stripe" }
  })
}

/** The dialect of an API version. */
export const dialectOf = (apiVersion: string): Dialect => apiVersion >= "2026-01-30" ? lineItemsFormat : documentFormat
