/**
 * The checkout API in the line-items format (2026-01-30, 2026-04-17): requests to domain inputs,
 * sessions to responses. What the format has and the domain does not honour is refused at its
 * JSONPath (`WireRefusal`), never dropped: split fulfillment (`fulfillment_groups`, several
 * options), quotes, tax exemption certificates, purchase orders, an authentication result nobody
 * asked for. Fields of no consequence to what the buyer gets are kept in the session's details.
 */
import { Either } from "effect"
import type {
  Address,
  Buyer,
  FulfillmentOption as PlainOption,
  LineItem as PlainLine,
  Message as PlainMessage
} from "../checkout-schemas.ts"
import type { FulfillmentContact, JsonObject, SessionDetails } from "../session-details.ts"
import type { Session, UpdateSessionInput } from "../session-model.ts"
import { type CheckoutCodec, type CompletedSession, requestCodec, WireRefusal } from "./checkout-codec.ts"
import { requests20260130, requests20260417, responseSchemasOf, type Total, type Version2026 } from "./schemas-2026.ts"

// ---------------------------------------------------------------------------------------------
// Paths: the domain names fields as the interface document does

const renames: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\$\.items(?=\[|$)/, "$.line_items"],
  [/^\$\.fulfillment_address(?=\.|$)/, "$.fulfillment_details.address"],
  [/^\$\.fulfillment_option_id$/, "$.selected_fulfillment_options[0].option_id"],
  [/^\$\.payment_data\.provider$/, "$.payment_data.handler_id"]
]

export const param2026 = (path: string): string => {
  for (const [pattern, replacement] of renames) {
    if (pattern.test(path)) return path.replace(pattern, replacement)
  }
  return path
}

// ---------------------------------------------------------------------------------------------
// Requests → domain

const refuse = (param: string, message: string, code: WireRefusal["code"] = "unsupported") =>
  Either.left(new WireRefusal({ code, message, param }))

type WireBuyer = { readonly first_name?: string; readonly last_name?: string; readonly email: string } & {
  readonly phone_number?: string
  readonly tax_exemption?: unknown
}

/**
 * A buyer of this format: the plain buyer when it has both names (what readiness needs), and its
 * whole profile in the details. A tax exemption certificate is refused: taxes here take none.
 */
const buyerChange = (
  buyer: WireBuyer | undefined,
  at: string
): Either.Either<{ readonly buyer?: Buyer; readonly details?: SessionDetails }, WireRefusal> => {
  if (buyer === undefined) return Either.right({})
  if (buyer.tax_exemption !== undefined) {
    return refuse(`${at}.tax_exemption`, "This merchant does not apply tax exemption certificates.")
  }
  const { email, first_name, last_name, phone_number } = buyer
  const plain: Buyer | undefined = first_name !== undefined && last_name !== undefined
    ? { first_name, last_name, email, ...(phone_number === undefined ? {} : { phone_number }) }
    : undefined
  return Either.right({ ...(plain === undefined ? {} : { buyer: plain }), details: { buyer: buyer as JsonObject } })
}

type WireAddress = Address & { readonly company?: string }
type WireFulfillmentDetails = FulfillmentContact & { readonly address?: WireAddress }

/** Fulfillment details: the address, and the contact (with the address's company) in the details. */
const fulfillmentChange = (
  details: WireFulfillmentDetails | undefined
): { readonly fulfillment_address?: Address; readonly contact?: FulfillmentContact } => {
  if (details === undefined) return {}
  const { address, ...contact } = details
  const company = address?.company
  const plainAddress = address === undefined ? undefined : withoutCompany(address)
  return {
    ...(plainAddress === undefined ? {} : { fulfillment_address: plainAddress }),
    contact: { ...contact, ...(company === undefined ? {} : { company }) }
  }
}

const withoutCompany = (address: WireAddress): Address => {
  const { company: _company, ...plain } = address
  return plain
}

const items = (lines: ReadonlyArray<{ readonly id: string; readonly quantity?: number }>) =>
  lines.map((line) => ({ id: line.id, quantity: line.quantity ?? 1 }))

/** The codes: `discounts.codes`, else the deprecated `coupons`. */
const codes = (
  body: { readonly discounts?: { readonly codes?: ReadonlyArray<string> }; readonly coupons?: ReadonlyArray<string> }
) => {
  const list = body.discounts?.codes ?? body.coupons
  return list === undefined ? {} : { discounts: { codes: list } }
}

/** The fields that have a value (an optional field is absent, never `undefined`). */
const defined = <T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }

type CreateBody = typeof requests20260417.create.Type
type UpdateBody = typeof requests20260417.update.Type
type CompleteBody = typeof requests20260417.complete.Type
type CancelBody = typeof requests20260417.cancel.Type

const toCreate = (body: CreateBody) => {
  if (body.fulfillment_groups !== undefined) {
    return refuse("$.fulfillment_groups", "Split fulfillment is not supported: one option serves the whole order.")
  }
  if (body.quote_id !== undefined) return refuse("$.quote_id", "This merchant does not issue quotes.")
  return Either.map(buyerChange(body.buyer, "$.buyer"), (buyer) => {
    const fulfillment = fulfillmentChange(body.fulfillment_details)
    const details = defined({
      ...buyer.details,
      fulfillment_contact: fulfillment.contact,
      locale: body.locale,
      timezone: body.timezone,
      metadata: body.metadata,
      order_notes: body.order_notes,
      affiliate_attribution: body.affiliate_attribution as JsonObject | undefined
    }) as SessionDetails
    const handlers = body.capabilities.payment?.handlers
    return {
      items: items(body.line_items),
      currency: body.currency,
      capabilities: defined({
        interventions: body.capabilities.interventions,
        payment_handler_names: handlers?.map((handler) => handler.name),
        extensions: body.capabilities.extensions
      }),
      ...(buyer.buyer === undefined ? {} : { buyer: buyer.buyer }),
      ...(fulfillment.fulfillment_address === undefined
        ? {}
        : { fulfillment_address: fulfillment.fulfillment_address }),
      ...codes(body),
      details
    }
  })
}

/** One option for the whole order: every selection must name the same option. */
const selection = (body: UpdateBody): Either.Either<Partial<UpdateSessionInput>, WireRefusal> => {
  const selected = body.selected_fulfillment_options
  if (selected === undefined || selected.length === 0) return Either.right({})
  const first = selected[0]!
  const other = selected.findIndex((s) => s.option_id !== first.option_id || s.type !== first.type)
  if (other >= 0) {
    return refuse(
      `$.selected_fulfillment_options[${other}]`,
      "Split fulfillment is not supported: select one option for every item."
    )
  }
  return Either.right({
    fulfillment_option_id: first.option_id,
    fulfillment_selection: { type: first.type, item_ids: selected.flatMap((s) => s.item_ids) }
  })
}

const toUpdate = (body: UpdateBody) => {
  if (body.fulfillment_groups !== undefined) {
    return refuse("$.fulfillment_groups", "Split fulfillment is not supported: one option serves the whole order.")
  }
  return Either.flatMap(
    buyerChange(body.buyer, "$.buyer"),
    (buyer) =>
      Either.map(selection(body), (selected): UpdateSessionInput => {
        const fulfillment = fulfillmentChange(body.fulfillment_details)
        const details = defined({
          ...buyer.details,
          fulfillment_contact: fulfillment.contact,
          order_notes: body.order_notes
        })
        return {
          ...(body.line_items === undefined ? {} : { items: items(body.line_items) }),
          ...(buyer.buyer === undefined ? {} : { buyer: buyer.buyer }),
          ...(fulfillment.fulfillment_address === undefined
            ? {}
            : { fulfillment_address: fulfillment.fulfillment_address }),
          ...selected,
          ...codes(body),
          ...(Object.keys(details).length === 0 ? {} : { details: details as SessionDetails })
        }
      })
  )
}

const purchaseOrderFields = ["purchase_order_number", "payment_terms", "due_date", "approval_required"] as const

const toComplete = (body: CompleteBody) => {
  const payment = body.payment_data
  const purchaseOrder = purchaseOrderFields.find((field) => payment[field] !== undefined)
  if (purchaseOrder !== undefined) {
    return refuse(`$.payment_data.${purchaseOrder}`, "No payment handler of this merchant takes purchase orders.")
  }
  if (payment.handler_id === undefined) return refuse("$.payment_data.handler_id", "handler_id is required.", "missing")
  if (payment.instrument === undefined) return refuse("$.payment_data.instrument", "instrument is required.", "missing")
  if (body.authentication_result !== undefined) {
    return refuse("$.authentication_result", "No authentication was requested for this session.", "invalid")
  }
  return Either.map(buyerChange(body.buyer, "$.buyer"), (buyer) => {
    const fulfillment = fulfillmentChange(body.fulfillment_details)
    const details = defined({
      ...buyer.details,
      fulfillment_contact: fulfillment.contact,
      affiliate_attribution: body.affiliate_attribution as JsonObject | undefined,
      risk_signals: body.risk_signals,
      marketing_consents: body.marketing_consents,
      order_notes: body.order_notes
    })
    return {
      payment_data: {
        handler_id: payment.handler_id!,
        instrument: payment.instrument!,
        ...(payment.billing_address === undefined ? {} : { billing_address: withoutCompany(payment.billing_address) })
      },
      ...(buyer.buyer === undefined ? {} : { buyer: buyer.buyer }),
      ...(fulfillment.fulfillment_address === undefined
        ? {}
        : { fulfillment_address: fulfillment.fulfillment_address }),
      ...(Object.keys(details).length === 0 ? {} : { details: details as SessionDetails })
    }
  })
}

const REASON_CODES = new Set([
  "price_sensitivity",
  "shipping_cost",
  "shipping_speed",
  "product_fit",
  "trust_security",
  "returns_policy",
  "payment_options",
  "comparison",
  "timing_deferred",
  "other"
])

/** An unknown reason code is kept as `other` (the trace's codes are extensible). */
const toCancel = (body: CancelBody) =>
  Either.right(
    body.intent_trace === undefined ? {} : {
      details: {
        intent_trace: {
          ...body.intent_trace,
          reason_code: REASON_CODES.has(body.intent_trace.reason_code) ? body.intent_trace.reason_code : "other"
        }
      }
    }
  )

// ---------------------------------------------------------------------------------------------
// Domain → responses

const total = (type: Total["type"], display_text: string, amount: number): Total => ({ type, display_text, amount })

const lineItem = (line: PlainLine) => ({
  id: line.id,
  item: { id: line.item.id },
  quantity: line.item.quantity,
  unit_amount: line.base_amount / line.item.quantity,
  totals: [
    total("items_base_amount", "Base amount", line.base_amount),
    total("discount", "Discount", line.discount),
    total("subtotal", "Subtotal", line.subtotal),
    total("tax", "Tax", line.tax),
    total("total", "Total", line.total)
  ]
})

const fulfillmentOption = (option: PlainOption) => {
  const totals = [
    total("fulfillment", option.title, option.subtotal),
    total("tax", "Tax", option.tax),
    total("total", "Total", option.total)
  ]
  const common = { id: option.id, title: option.title, description: option.subtitle, totals }
  return option.type === "shipping"
    ? {
      type: option.type,
      ...common,
      carrier: option.carrier,
      earliest_delivery_time: option.earliest_delivery_time,
      latest_delivery_time: option.latest_delivery_time
    }
    : { type: option.type, ...common }
}

/** Link types of this format; `seller_shop_policies` has no counterpart here and is not shown. */
const LINK_TYPES = new Set(["terms_of_use", "privacy_policy"])

const fulfillmentDetails = (session: Session) => {
  const { company, ...contact }: FulfillmentContact = session.details?.fulfillment_contact ?? {}
  const address = session.fulfillment_address
  const details = {
    ...contact,
    ...(address === undefined ? {} : { address: company === undefined ? address : { ...address, company } })
  }
  return Object.keys(details).length === 0 ? {} : { fulfillment_details: details }
}

const selectedOptions = (session: Session) => {
  const option = session.fulfillment_options.find((o) => o.id === session.fulfillment_option_id)
  return option === undefined ? {} : {
    selected_fulfillment_options: [{
      type: option.type,
      option_id: option.id,
      item_ids: [...new Set(session.items.map((item) => item.id))]
    }]
  }
}

const REJECTED_CODE = /^\$\.discounts\.codes\[(\d+)\]$/

/**
 * A message in this format's words: its param renamed, and the note of a rejected discount code a
 * warning with the rejection's reason as its code, as the discount extension has it (the domain
 * keeps it as an info, the only kind the interface document has).
 */
const message2026 = (session: Session) => (message: PlainMessage) => {
  const renamed = message.param === undefined ? message : { ...message, param: param2026(message.param) }
  const index = message.type === "info" && message.param !== undefined
    ? REJECTED_CODE.exec(message.param)?.[1]
    : undefined
  if (index === undefined) return renamed
  const code = session.discounts?.codes[Number(index)]
  const rejection = session.discounts?.rejected.find((r) => r.code === code && r.message === message.content)
  return rejection === undefined ? renamed : {
    type: "warning" as const,
    code: rejection.reason,
    param: message.param!,
    content_type: message.content_type,
    content: message.content
  }
}

const capabilities = (session: Session) => {
  const { interventions, ...rest } = session.capabilities
  return {
    ...rest,
    ...(interventions === undefined ? {} : {
      interventions: defined({
        supported: interventions.supported,
        required: interventions.required,
        enforcement: interventions.enforcement
      })
    })
  }
}

const encodeSession = (version: Version2026) => (session: Session) => {
  const details = session.details
  const buyer = details?.buyer ?? session.buyer
  return {
    id: session.id,
    protocol: { version },
    capabilities: capabilities(session),
    status: session.status,
    currency: session.currency,
    line_items: session.line_items.map(lineItem),
    fulfillment_options: session.fulfillment_options.map(fulfillmentOption),
    totals: session.totals,
    messages: session.messages.map(message2026(session)),
    links: session.links.filter((link) => LINK_TYPES.has(link.type)),
    ...(buyer === undefined ? {} : { buyer }),
    ...fulfillmentDetails(session),
    ...selectedOptions(session),
    ...defined({ locale: details?.locale, timezone: details?.timezone, metadata: details?.metadata }),
    ...(session.discounts === undefined ? {} : { discounts: session.discounts }),
    created_at: session.created_at,
    updated_at: session.updated_at,
    expires_at: session.expires_at
  }
}

export const makeCodec2026 = (version: Version2026): CheckoutCodec => {
  const requests = version === "2026-04-17" ? requests20260417 : requests20260130
  const responses = responseSchemasOf(version)
  const session = encodeSession(version)
  const notes = (s: Session) => s.details?.order_notes
  return {
    version,
    create: requestCodec(requests.create, toCreate),
    update: requestCodec(requests.update, toUpdate),
    complete: requestCodec(requests.complete, toComplete),
    cancel: requestCodec(requests.cancel, toCancel),
    session: { schema: responses.session, encode: session },
    sessionWithOrder: {
      schema: responses.sessionWithOrder,
      encode: (completed: CompletedSession) => ({
        ...session(completed),
        order: version === "2026-04-17"
          ? {
            type: "order",
            ...completed.order,
            ...(notes(completed) === undefined ? {} : { confirmation: { order_notes: notes(completed) } })
          }
          : completed.order
      })
    },
    sessionIsStoredProjection: false,
    param: param2026
  }
}
