/**
 * A session as UCP 2026-04-08's checkout response: the `ucp` envelope, the base checkout, and the
 * fields of each negotiated extension (fulfillment, discounts, buyer consent) only when negotiated.
 * Amounts stay integers in minor units; totals follow the release's sign rules (discounts negative,
 * exactly one subtotal and one total, the entries summing to the total).
 */
import type { FulfillmentOption } from "../../../../catalog/model/fulfillment.ts"
import type { LineItem } from "../../../../catalog/model/line-items.ts"
import type { JsonObject } from "../../../../checkout/session/details.ts"
import type { Message } from "../../../../checkout/session/schemas.ts"
import type { Session } from "../../../../checkout/session/session.ts"
import { defined } from "../../../../shared/defined-fields.ts"
import { DESTINATION_ID, GROUP_ID, METHOD_ID } from "./checkout-inputs.ts"
import type { ActiveExtensions } from "./extensions.ts"

/** The `ucp` object of a response: the negotiated capabilities relevant to it, and the handlers offered. */
export interface Envelope {
  readonly version: string
  readonly status: "success" | "error"
  readonly capabilities: Readonly<Record<string, ReadonlyArray<{ readonly version: string }>>>
  readonly payment_handlers?: Readonly<Record<string, ReadonlyArray<JsonObject>>>
}

export type UcpStatus =
  | "incomplete"
  | "requires_escalation"
  | "ready_for_complete"
  | "complete_in_progress"
  | "completed"
  | "canceled"

type Total = { readonly type: string; readonly display_text?: string; readonly amount: number }

/** The domain's JSONPaths in the release's names. */
const renames: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\$\.items(?=\[|$)/, "$.line_items"],
  [/^\$\.fulfillment_address(?=\.|$)/, `$.fulfillment.methods[0].destinations[0]`],
  [/^\$\.fulfillment_option_id$/, "$.fulfillment.methods[0].groups[0].selected_option_id"],
  [/^\$\.payment_data(?=\.|$)/, "$.payment.instruments[0]"]
]

export const ucpPath = (path: string): string => {
  for (const [pattern, replacement] of renames) if (pattern.test(path)) return path.replace(pattern, replacement)
  return path
}

const REJECTED_CODE = /^\$\.discounts\.codes\[(\d+)\]$/

/** Without the fulfillment extension a physical session cannot get an address by API: the buyer gives it. */
const severityOf = (message: Message & { readonly type: "error" }, active: ActiveExtensions) =>
  !active.fulfillment && message.param?.startsWith("$.fulfillment") === true
    ? "requires_buyer_input" as const
    : "recoverable" as const

const CODES: Readonly<Record<string, string>> = { payment_declined: "payment_failed" }

const message = (session: Session, active: ActiveExtensions) => (plain: Message) => {
  const path = plain.param === undefined ? {} : { path: ucpPath(plain.param) }
  if (plain.type === "error") {
    return {
      type: "error" as const,
      code: CODES[plain.code] ?? plain.code,
      ...path,
      content_type: plain.content_type,
      content: plain.content,
      severity: severityOf(plain, active)
    }
  }
  // A rejected discount code is a warning with the reason as its code, as the discount extension has it.
  const index = plain.param === undefined ? undefined : REJECTED_CODE.exec(plain.param)?.[1]
  const code = index === undefined ? undefined : session.discounts?.codes[Number(index)]
  const rejection = session.discounts?.rejected.find((r) => r.code === code && r.message === plain.content)
  return rejection === undefined
    ? { type: "info" as const, ...path, content_type: plain.content_type, content: plain.content }
    : {
      type: "warning" as const,
      code: rejection.reason,
      ...path,
      content_type: plain.content_type,
      content: plain.content
    }
}

/** No eligibility claim is one this merchant recognizes: each is said so, none blocks the checkout. */
const eligibilityWarnings = (session: Session) => {
  const claims = session.details?.context?.eligibility
  if (!Array.isArray(claims)) return []
  return claims.map((claim, index) => ({
    type: "warning" as const,
    code: "eligibility_not_accepted",
    path: `$.context.eligibility[${index}]`,
    content_type: "plain" as const,
    content: `The claim ${String(claim)} is not one this merchant recognizes; prices do not depend on it.`
  }))
}

export const ucpStatus = (session: Session, messages: ReadonlyArray<object>): UcpStatus => {
  switch (session.status) {
    case "completed":
      return "completed"
    case "canceled":
    case "expired":
      return "canceled"
    case "ready_for_payment":
      return "ready_for_complete"
    case "authentication_required":
      return "requires_escalation"
    case "not_ready_for_payment":
      return messages.some((m) =>
          "severity" in m && (m.severity === "requires_buyer_input" || m.severity === "requires_buyer_review")
        )
        ? "requires_escalation"
        : "incomplete"
  }
}

const lineTotals = (line: LineItem): ReadonlyArray<Total> => [
  { type: "subtotal", amount: line.base_amount },
  ...(line.discount === 0 ? [] : [{ type: "items_discount", amount: -line.discount }]),
  ...(line.tax === 0 ? [] : [{ type: "tax", amount: line.tax }]),
  { type: "total", amount: line.total }
]

const lineItem = (titles: ReadonlyMap<string, string>) => (line: LineItem) => ({
  id: line.id,
  item: {
    id: line.item.id,
    title: titles.get(line.item.id) ?? line.item.id,
    price: line.base_amount / line.item.quantity
  },
  quantity: line.item.quantity,
  totals: lineTotals(line)
})

/** `subtotal` is the lines' prices; the domain's discounted subtotal is that less the discounts. */
const sessionTotals = (session: Session): ReadonlyArray<Total> => {
  const amount = (type: string) => session.totals.find((total) => total.type === type)?.amount
  const entries: Array<Total> = [{
    type: "subtotal",
    display_text: "Subtotal",
    amount: amount("items_base_amount") ?? 0
  }]
  const itemsDiscount = amount("items_discount") ?? 0
  if (itemsDiscount !== 0) entries.push({ type: "items_discount", display_text: "Discounts", amount: -itemsDiscount })
  const fulfillment = session.totals.find((total) => total.type === "fulfillment")
  if (fulfillment !== undefined) {
    entries.push({ type: "fulfillment", display_text: fulfillment.display_text, amount: fulfillment.amount })
  }
  entries.push({ type: "tax", display_text: "Tax", amount: amount("tax") ?? 0 })
  entries.push({ type: "total", display_text: "Total", amount: amount("total") ?? 0 })
  return entries
}

const option = (plain: FulfillmentOption) => ({
  id: plain.id,
  title: plain.title,
  description: plain.subtitle,
  ...(plain.type === "shipping"
    ? {
      carrier: plain.carrier,
      earliest_fulfillment_time: plain.earliest_delivery_time,
      latest_fulfillment_time: plain.latest_delivery_time
    }
    : {}),
  totals: [
    { type: "fulfillment", amount: plain.subtotal },
    ...(plain.tax === 0 ? [] : [{ type: "tax", amount: plain.tax }]),
    { type: "total", amount: plain.total }
  ]
})

/** One shipping method for every line, to the session's one address, with its options in one group. */
const fulfillment = (session: Session) => {
  const lineIds = session.line_items.map((line) => line.id)
  const address = session.fulfillment_address
  const [first, ...rest] = address?.name.split(" ") ?? []
  const shipping = session.fulfillment_options.filter((o) => o.type === "shipping")
  return {
    methods: [{
      id: METHOD_ID,
      type: "shipping",
      line_item_ids: lineIds,
      destinations: address === undefined ? [] : [
        defined({
          id: DESTINATION_ID,
          street_address: address.line_one,
          extended_address: address.line_two,
          address_locality: address.city,
          address_region: address.state,
          address_country: address.country,
          postal_code: address.postal_code,
          first_name: first,
          last_name: rest.length === 0 ? undefined : rest.join(" ")
        })
      ],
      selected_destination_id: address === undefined ? null : DESTINATION_ID,
      groups: address === undefined ? [] : [{
        id: GROUP_ID,
        line_item_ids: lineIds,
        options: shipping.map(option),
        selected_option_id: session.fulfillment_option_id ?? null
      }]
    }],
    available_methods: [{ type: "shipping", line_item_ids: lineIds }]
  }
}

const discounts = (session: Session) => ({
  codes: session.discounts?.codes ?? [],
  applied: (session.discounts?.applied ?? []).map((applied) => ({
    code: applied.code,
    title: applied.coupon.name,
    amount: applied.amount,
    automatic: applied.automatic,
    method: applied.method,
    priority: applied.priority,
    allocations: applied.allocations.map((allocation) => ({
      path: ucpPath(allocation.path),
      amount: allocation.amount
    }))
  }))
})

/** The buyer as given (names, email, phone; consent only with its extension). */
const buyer = (session: Session, active: ActiveExtensions) => {
  const given = session.details?.buyer ?? session.buyer
  if (given === undefined) return {}
  const { consent, email, first_name, last_name, phone_number } = given as JsonObject
  return {
    buyer: defined({
      first_name,
      last_name,
      email,
      phone_number,
      consent: active.buyerConsent ? consent : undefined
    })
  }
}

const LINK_TYPES: Readonly<Record<string, string>> = { terms_of_use: "terms_of_service" }

export interface CheckoutView {
  readonly envelope: Envelope
  readonly active: ActiveExtensions
  /** Product titles by item id (the catalog's names). */
  readonly titles: ReadonlyMap<string, string>
  /** Where the buyer continues in the merchant's own pages; required while the status asks for the buyer. */
  readonly continueUrl: string | undefined
}

export const encodeCheckout = (session: Session, view: CheckoutView) => {
  const messages = [...session.messages.map(message(session, view.active)), ...eligibilityWarnings(session)]
  const status = ucpStatus(session, messages)
  const details = session.details
  const open = status !== "completed" && status !== "canceled"
  return {
    ucp: view.envelope,
    id: session.id,
    status,
    currency: session.currency.toUpperCase(),
    line_items: session.line_items.map(lineItem(view.titles)),
    ...buyer(session, view.active),
    ...defined({
      context: details?.context,
      signals: details?.risk_signals,
      attribution: details?.affiliate_attribution
    }),
    totals: sessionTotals(session),
    messages,
    links: session.links.map((link) => ({ type: LINK_TYPES[link.type] ?? link.type, url: link.url })),
    expires_at: session.expires_at,
    ...(open && view.continueUrl !== undefined ? { continue_url: view.continueUrl } : {}),
    ...(details?.payment_instruments === undefined ? {} : { payment: { instruments: details.payment_instruments } }),
    ...(view.active.fulfillment ? { fulfillment: fulfillment(session) } : {}),
    ...(view.active.discount ? { discounts: discounts(session) } : {}),
    ...(session.order === undefined
      ? {}
      : { order: { id: session.order.id, label: session.order.id, permalink_url: session.order.permalink_url } })
  }
}
