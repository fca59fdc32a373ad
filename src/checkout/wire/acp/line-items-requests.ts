/**
 * Line-items requests as domain inputs. What the domain does not honour is refused at its JSONPath
 * (`WireRefusal`), never dropped; fields of no consequence to what the buyer gets are kept in the
 * session's details (docs/wire-formats.md).
 */
import { Either } from "effect"
import { type Address } from "../../../catalog/model/fulfillment.ts"
import { OUTCOMES_WITH_DETAILS } from "../../../payments/model/issuer-authentication.ts"
import { defined } from "../../../shared/defined-fields.ts"
import type { FulfillmentContact, JsonObject, SessionDetails, SuggestedPrice } from "../../session/details.ts"
import type { Buyer } from "../../session/schemas.ts"
import type { UpdateSessionInput } from "../../session/session.ts"
import { WireRefusal } from "./codec.ts"
import type { requests20260417 } from "./line-items-request-schemas.ts"

const refuse = (param: string, message: string, code: WireRefusal["code"] = "unsupported") =>
  Either.left(new WireRefusal({ code, message, param }))

type WireBuyer = { readonly first_name?: string; readonly last_name?: string; readonly email: string } & {
  readonly phone_number?: string
  readonly tax_exemption?: unknown
}

/** The plain buyer when it has both names (what readiness needs); the whole profile in the details. */
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

type WireItem = {
  readonly id: string
  readonly quantity?: number
  readonly suggested_price?: { readonly amount: number; readonly source: { readonly feed_id: string } }
}

const items = (lines: ReadonlyArray<WireItem>) => lines.map((line) => ({ id: line.id, quantity: line.quantity ?? 1 }))

/** The feed prices the agent saw, by line: kept to tell it when the catalog's price differs. */
const suggestedPrices = (lines: ReadonlyArray<WireItem>): ReadonlyArray<SuggestedPrice> =>
  lines.flatMap((line, index) =>
    line.suggested_price === undefined
      ? []
      : [{ index, item_id: line.id, amount: line.suggested_price.amount, feed_id: line.suggested_price.source.feed_id }]
  )

const nonEmpty = <A>(list: ReadonlyArray<A>) => (list.length === 0 ? undefined : list)

/** The codes: `discounts.codes`, else the deprecated `coupons`. */
const codes = (
  body: { readonly discounts?: { readonly codes?: ReadonlyArray<string> }; readonly coupons?: ReadonlyArray<string> }
) => {
  const list = body.discounts?.codes ?? body.coupons
  return list === undefined ? {} : { discounts: { codes: list } }
}

type CreateBody = typeof requests20260417.create.Type
type UpdateBody = typeof requests20260417.update.Type
type CompleteBody = typeof requests20260417.complete.Type
type CancelBody = typeof requests20260417.cancel.Type

export const toCreate = (body: CreateBody) => {
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
      affiliate_attribution: body.affiliate_attribution as JsonObject | undefined,
      suggested_prices: nonEmpty(suggestedPrices(body.line_items))
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

export const toUpdate = (body: UpdateBody) => {
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
          order_notes: body.order_notes,
          // New items replace the prices seen for the old ones, none included.
          suggested_prices: body.line_items === undefined ? undefined : suggestedPrices(body.line_items)
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

export const toComplete = (body: CompleteBody) => {
  const payment = body.payment_data
  const purchaseOrder = purchaseOrderFields.find((field) => payment[field] !== undefined)
  if (purchaseOrder !== undefined) {
    return refuse(`$.payment_data.${purchaseOrder}`, "No payment handler of this merchant takes purchase orders.")
  }
  if (payment.handler_id === undefined) return refuse("$.payment_data.handler_id", "handler_id is required.", "missing")
  if (payment.instrument === undefined) return refuse("$.payment_data.instrument", "instrument is required.", "missing")
  const authentication = body.authentication_result
  if (
    authentication !== undefined && authentication.outcome_details === undefined &&
    OUTCOMES_WITH_DETAILS.includes(authentication.outcome)
  ) {
    return refuse(
      "$.authentication_result.outcome_details",
      `outcome_details is required when the outcome is ${authentication.outcome}.`,
      "missing"
    )
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
      ...(Object.keys(details).length === 0 ? {} : { details: details as SessionDetails }),
      ...(authentication === undefined ? {} : { authentication_result: authentication }),
      canAuthenticate: true
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
export const toCancel = (body: CancelBody) =>
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
