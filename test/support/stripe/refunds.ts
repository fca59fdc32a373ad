/**
 * Refunds (API reference, "Refunds"): `POST /v1/refunds` for a `payment_intent` or a `charge`,
 * the whole unrefunded amount unless `amount` says less; the charge's `amount_refunded` grows and
 * `refunded` turns true once it reaches the amount. Refunding more than is left, a charge already
 * fully refunded, or a disputed charge fails as Stripe fails it. Disputes are opened and closed by
 * the test (a cardholder's bank does it, not an API call).
 */
import { newId } from "./clock.ts"
import { invalidRequest, resourceMissing } from "./errors.ts"
import type { Charge, Dispute, Refund } from "./objects.ts"
import { integer, metadata, oneOf, optional, string, withExpand } from "./params.ts"
import type { FakeState, RequestContext } from "./state.ts"
import { NO_REQUEST } from "./state.ts"

export const createRefundFields = withExpand({
  payment_intent: optional(string),
  charge: optional(string),
  amount: optional(integer),
  reason: optional(oneOf("duplicate", "fraudulent", "requested_by_customer")),
  metadata: optional(metadata)
})

type Params = Record<string, any>

const chargeToRefund = (state: FakeState, params: Params): Charge => {
  if (params.payment_intent !== undefined && params.charge !== undefined) {
    throw invalidRequest("You may only specify one of these parameters: charge, payment_intent.", {
      code: "parameters_exclusive"
    })
  }
  if (params.charge !== undefined) {
    const charge = state.charges.get(params.charge)
    if (charge === undefined) {
      throw invalidRequest(`No such charge: '${params.charge}'`, { code: "resource_missing", param: "charge" })
    }
    return charge
  }
  if (params.payment_intent === undefined) {
    throw invalidRequest("One of the following params should be provided for this request: payment_intent or charge.", {
      code: "parameter_missing"
    })
  }
  const intent = state.paymentIntents.get(params.payment_intent)
  if (intent === undefined) {
    throw invalidRequest(`No such payment_intent: '${params.payment_intent}'`, {
      code: "resource_missing",
      param: "payment_intent"
    })
  }
  const charge = intent.latest_charge === null ? undefined : state.charges.get(intent.latest_charge)
  if (charge === undefined || intent.status !== "succeeded") {
    throw invalidRequest(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, {
      code: "charge_not_refundable",
      param: "payment_intent"
    })
  }
  return charge
}

export const createRefund = (state: FakeState, params: Params, request: RequestContext): Refund => {
  const charge = chargeToRefund(state, params)
  if (charge.status !== "succeeded" || !charge.captured) {
    throw invalidRequest(`Charge ${charge.id} cannot be refunded: it has not been captured.`, {
      code: "charge_not_refundable"
    })
  }
  if (charge.refunded) {
    throw invalidRequest(`Charge ${charge.id} has already been refunded.`, { code: "charge_already_refunded" })
  }
  const open = [...state.disputes.values()].some((d) => d.charge === charge.id && d.status === "needs_response")
  if (open) {
    throw invalidRequest(`Charge ${charge.id} has been charged back; it cannot be refunded.`, {
      code: "charge_disputed"
    })
  }
  const left = charge.amount_captured - charge.amount_refunded
  const amount: number = params.amount ?? left
  if (amount < 1) {
    throw invalidRequest("Invalid positive integer", { code: "parameter_invalid_integer", param: "amount" })
  }
  if (amount > left) {
    throw invalidRequest(`Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`, {
      code: "amount_too_large",
      param: "amount"
    })
  }
  const refund: Refund = {
    id: newId("re"),
    object: "refund",
    amount,
    charge: charge.id,
    created: state.now(),
    currency: charge.currency,
    metadata: params.metadata ?? {},
    payment_intent: charge.payment_intent,
    reason: params.reason ?? null,
    status: "succeeded"
  }
  state.refunds.set(refund.id, refund)
  charge.amount_refunded += amount
  charge.refunded = charge.amount_refunded >= charge.amount
  state.emit("refund.created", refund, request)
  state.emit("charge.refunded", charge, request)
  return refund
}

export const listRefundFields = withExpand({
  payment_intent: optional(string),
  charge: optional(string),
  limit: optional(integer),
  starting_after: optional(string),
  ending_before: optional(string)
})

/**
 * `GET /v1/refunds` (API reference, "List all refunds"): newest first, filtered by `payment_intent`
 * or `charge`, `limit` 1–100 (default 10), paged with `starting_after` / `ending_before`.
 */
export const listRefunds = (state: FakeState, params: Params) => {
  const limit: number = params.limit ?? 10
  if (limit < 1 || limit > 100) {
    throw invalidRequest("This value must be greater than or equal to 1.", { param: "limit" })
  }
  const all = [...state.refunds.values()].reverse().filter((refund) =>
    (params.payment_intent === undefined || refund.payment_intent === params.payment_intent) &&
    (params.charge === undefined || refund.charge === params.charge)
  )
  const cursor = (id: string, param: string) => {
    const at = all.findIndex((refund) => refund.id === id)
    if (at < 0) throw invalidRequest(`No such refund: '${id}'`, { code: "resource_missing", param })
    return at
  }
  let page: Array<Refund>
  let hasMore: boolean
  if (params.starting_after !== undefined) {
    const from = cursor(params.starting_after, "starting_after") + 1
    page = all.slice(from, from + limit)
    hasMore = from + limit < all.length
  } else if (params.ending_before !== undefined) {
    const to = cursor(params.ending_before, "ending_before")
    page = all.slice(Math.max(0, to - limit), to)
    hasMore = to - limit > 0
  } else {
    page = all.slice(0, limit)
    hasMore = limit < all.length
  }
  return { object: "list", data: page, has_more: hasMore, url: "/v1/refunds" }
}

export const findRefund = (state: FakeState, id: string): Refund => {
  const refund = state.refunds.get(id)
  if (refund === undefined) throw resourceMissing("refund", id)
  return refund
}

export const findCharge = (state: FakeState, id: string): Charge => {
  const charge = state.charges.get(id)
  if (charge === undefined) throw resourceMissing("charge", id)
  return charge
}

/** The cardholder disputes a charge (`charge.dispute.created`); `disputed` turns true. */
export const openDispute = (state: FakeState, chargeId: string, reason: string): Dispute => {
  const charge = findCharge(state, chargeId)
  const dispute: Dispute = {
    id: newId("dp"),
    object: "dispute",
    amount: charge.amount - charge.amount_refunded,
    charge: charge.id,
    created: state.now(),
    currency: charge.currency,
    livemode: false,
    metadata: {},
    payment_intent: charge.payment_intent,
    reason,
    status: "needs_response"
  }
  state.disputes.set(dispute.id, dispute)
  charge.disputed = true
  state.emit("charge.dispute.created", dispute, NO_REQUEST)
  return dispute
}

/** The dispute is decided (`charge.dispute.closed` with status `won` or `lost`). */
export const closeDispute = (state: FakeState, disputeId: string, status: "won" | "lost"): Dispute => {
  const dispute = state.disputes.get(disputeId)
  if (dispute === undefined) throw new Error(`no dispute ${disputeId}`)
  dispute.status = status
  state.emit("charge.dispute.closed", dispute, NO_REQUEST)
  return dispute
}
