/**
 * The order state machine over `order.ts`: a pure function of (order, command, now). Ids inside an
 * order (`ful_<n>`, `adj_<n>`, `ful_<n>_ev_<m>`) are sequence numbers, so that it stays pure. Every
 * refund adds an adjustment and keeps the `amount_refunded` total current.
 */
import { Data, Either } from "effect"
import type {
  Adjustment,
  AdjustmentStatus,
  Fulfillment,
  FulfillmentEventType,
  LineItemReference,
  Order,
  OrderLineItem,
  OrderStatus,
  OrderTotal,
  Refund,
  RefundType
} from "./order.ts"

export type OrderCommand = Data.TaggedEnum<{
  Confirm: {}
  HoldForReview: {}
  Ship: { readonly carrier: string; readonly tracking_number: string; readonly tracking_url?: string }
  /** shipped → fulfilled, or confirmed → fulfilled when every line is digital. */
  Fulfill: {}
  Cancel: {}
  /** The merchant's refund; the references say what moved the money (`Adjustment`), when something did. */
  Refund: {
    readonly type: RefundType
    readonly amount: number
    readonly payment_reference?: string
    readonly request_reference?: string
  }
  /**
   * Refunds the payment provider says were made of the order's payment, in any status: each not yet
   * recorded (by its reference) becomes a refund to the original payment. The money has moved, so no
   * rule refuses it. A refund the state machine has already recorded changes nothing.
   */
  RecordPaymentRefunds: { readonly refunds: ReadonlyArray<PaymentRefund> }
  /** A dispute (chargeback) of the order's payment, opened or decided: one adjustment per dispute. */
  RecordDispute: {
    readonly reference: string
    readonly amount: number
    readonly reason: string
    readonly outcome: DisputeOutcome
  }
  /** A new buyer's link in any status: the old one stops opening the order's page (revocation). */
  ReplacePermalink: { readonly permalink_url: string }
}>
export const OrderCommand = Data.taggedEnum<OrderCommand>()

export interface PaymentRefund {
  readonly reference: string
  readonly amount: number
  readonly request_reference?: string
}

/** `open` while the bank decides; `lost` gives the buyer the amount back, `won` gives nothing back. */
export type DisputeOutcome = "open" | "won" | "lost"

const DISPUTE_STATUS: Readonly<Record<DisputeOutcome, AdjustmentStatus>> = {
  open: "pending",
  lost: "completed",
  won: "failed"
}

export class InvalidOrderTransition extends Data.TaggedError("InvalidOrderTransition")<{
  readonly from: OrderStatus
  readonly to: OrderStatus
}> {
  override get message(): string {
    return `an order in status ${this.from} cannot become ${this.to}`
  }
}

export class RefundExceedsTotal extends Data.TaggedError("RefundExceedsTotal")<{
  readonly remaining: number
}> {
  override get message(): string {
    return `refund exceeds the refundable remainder of ${this.remaining}`
  }
}

export class RefundNotAllowed extends Data.TaggedError("RefundNotAllowed")<{
  readonly status: OrderStatus
}> {
  override get message(): string {
    return `refunds are not allowed while the order is ${this.status}`
  }
}

/** The refund amount is not a safe integer from 1 to `MAX_REFUND`. */
export class InvalidRefundAmount extends Data.TaggedError("InvalidRefundAmount")<{
  readonly amount: number
}> {
  override get message(): string {
    return "refund amount must be a positive integer in minor units"
  }
}

export type OrderError = InvalidOrderTransition | RefundExceedsTotal | RefundNotAllowed | InvalidRefundAmount

export const ORDER_TRANSITIONS: Readonly<Record<OrderStatus, ReadonlyArray<OrderStatus>>> = {
  created: ["confirmed", "manual_review", "canceled"],
  manual_review: ["confirmed", "canceled"],
  confirmed: ["shipped", "fulfilled", "canceled"],
  canceled: [],
  shipped: ["fulfilled"],
  fulfilled: []
}

/** Whether the status table allows `from → to` (confirmed → fulfilled additionally needs all-digital lines). */
export const canTransition = (from: OrderStatus, to: OrderStatus): boolean => ORDER_TRANSITIONS[from].includes(to)

export const isAllDigital = (order: Order): boolean =>
  order.line_items.length > 0 && order.line_items.every((line) => line.kind === "digital")

/** The amount charged at checkout: the `total` entry, else Σ line totals. */
export const orderTotal = (order: Order): number => {
  const total = order.totals.find((t) => t.type === "total")
  return total ? total.amount : order.line_items.reduce((sum, line) => sum + line.total, 0)
}

export const refundedAmount = (order: Order): number => order.refunds.reduce((sum, r) => sum + r.amount, 0)

export const refundableRemainder = (order: Order): number => Math.max(0, orderTotal(order) - refundedAmount(order))

const MAX_REFUND = 1_000_000_000_000

const targetOf = (command: OrderCommand): OrderStatus | undefined => {
  switch (command._tag) {
    case "Confirm":
      return "confirmed"
    case "HoldForReview":
      return "manual_review"
    case "Ship":
      return "shipped"
    case "Fulfill":
      return "fulfilled"
    case "Cancel":
      return "canceled"
    case "Refund":
    case "ReplacePermalink":
    case "RecordPaymentRefunds":
    case "RecordDispute":
      return undefined
  }
}

const allLinesReference = (order: Order): ReadonlyArray<LineItemReference> =>
  order.line_items.map((line) => ({ id: line.id, quantity: line.quantity.ordered }))

const allShipped = (order: Order): ReadonlyArray<OrderLineItem> =>
  order.line_items.map((line) => ({
    ...line,
    quantity: { ordered: line.quantity.ordered, shipped: line.quantity.ordered }
  }))

const nextFulfillmentId = (order: Order): string => `ful_${order.fulfillments.length + 1}`
/** The id the next adjustment of `order` gets. */
export const nextAdjustmentId = (order: Order): string => `adj_${order.adjustments.length + 1}`

/** The references of the provider's refunds this order has recorded. */
export const recordedPaymentReferences = (order: Order): ReadonlySet<string> =>
  new Set(order.adjustments.flatMap((a) => (a.payment_reference === undefined ? [] : [a.payment_reference])))

const withEvent = (fulfillment: Fulfillment, type: FulfillmentEventType, nowIso: string): Fulfillment => ({
  ...fulfillment,
  events: [...fulfillment.events, {
    id: `${fulfillment.id}_ev_${fulfillment.events.length + 1}`,
    type,
    occurred_at: nowIso
  }]
})

const upsertRefundedTotal = (totals: ReadonlyArray<OrderTotal>, amount: number): ReadonlyArray<OrderTotal> => {
  const entry: OrderTotal = { type: "amount_refunded", display_text: "Refunded", amount }
  return totals.some((t) => t.type === "amount_refunded")
    ? totals.map((t) => (t.type === "amount_refunded" ? entry : t))
    : [...totals, entry]
}

const withRefund = (
  order: Order,
  refund: {
    readonly type: RefundType
    readonly amount: number
    readonly payment_reference?: string | undefined
    readonly request_reference?: string | undefined
  },
  nowIso: string
): Order => {
  const refunds: ReadonlyArray<Refund> = [...order.refunds, { type: refund.type, amount: refund.amount }]
  const adjustment: Adjustment = {
    id: nextAdjustmentId(order),
    type: refund.type === "original_payment" ? "refund" : "credit",
    status: "completed",
    occurred_at: nowIso,
    amount: refund.amount,
    ...(refund.payment_reference !== undefined ? { payment_reference: refund.payment_reference } : {}),
    ...(refund.request_reference !== undefined ? { request_reference: refund.request_reference } : {})
  }
  return {
    ...order,
    refunds,
    adjustments: [...order.adjustments, adjustment],
    totals: upsertRefundedTotal(order.totals, refundedAmount({ ...order, refunds }))
  }
}

const recordPaymentRefunds = (order: Order, refunds: ReadonlyArray<PaymentRefund>, nowIso: string): Order => {
  const recorded = new Set(recordedPaymentReferences(order))
  let next = order
  for (const refund of refunds) {
    if (recorded.has(refund.reference) || !Number.isSafeInteger(refund.amount) || refund.amount < 1) continue
    recorded.add(refund.reference)
    next = withRefund(next, {
      type: "original_payment",
      amount: refund.amount,
      payment_reference: refund.reference,
      request_reference: refund.request_reference
    }, nowIso)
  }
  return next
}

const recordDispute = (
  order: Order,
  dispute: {
    readonly reference: string
    readonly amount: number
    readonly reason: string
    readonly outcome: DisputeOutcome
  },
  nowIso: string
): Order => {
  const status = DISPUTE_STATUS[dispute.outcome]
  const existing = order.adjustments.find((a) => a.type === "dispute" && a.payment_reference === dispute.reference)
  if (existing !== undefined) {
    // Decided once: a late `open` (events arrive in any order) never reopens a decided dispute.
    if (existing.status !== "pending" || status === "pending") return order
    return {
      ...order,
      adjustments: order.adjustments.map((a) => (a === existing ? { ...a, status, occurred_at: nowIso } : a))
    }
  }
  const adjustment: Adjustment = {
    id: nextAdjustmentId(order),
    type: "dispute",
    status,
    occurred_at: nowIso,
    amount: Math.max(0, Math.trunc(dispute.amount)),
    reason: dispute.reason,
    payment_reference: dispute.reference
  }
  return { ...order, adjustments: [...order.adjustments, adjustment] }
}

/** `nowIso` (RFC 3339) stamps fulfillment events and adjustments; the input is never mutated. */
export const applyOrderCommand = (
  order: Order,
  command: OrderCommand,
  nowIso: string
): Either.Either<Order, OrderError> => {
  if (command._tag === "ReplacePermalink") return Either.right({ ...order, permalink_url: command.permalink_url })
  if (command._tag === "RecordPaymentRefunds") return Either.right(recordPaymentRefunds(order, command.refunds, nowIso))
  if (command._tag === "RecordDispute") return Either.right(recordDispute(order, command, nowIso))
  if (command._tag === "Refund") {
    if (order.status === "created") return Either.left(new RefundNotAllowed({ status: order.status }))
    const amount = command.amount
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_REFUND) {
      return Either.left(new InvalidRefundAmount({ amount }))
    }
    const remaining = refundableRemainder(order)
    if (amount > remaining) return Either.left(new RefundExceedsTotal({ remaining }))
    return Either.right(withRefund(order, command, nowIso))
  }

  const to = targetOf(command)!
  const from = order.status
  const invalid = Either.left(new InvalidOrderTransition({ from, to }))
  if (!canTransition(from, to)) return invalid

  switch (command._tag) {
    case "Confirm":
    case "HoldForReview":
      return Either.right({ ...order, status: to })
    case "Cancel":
      return Either.right({
        ...order,
        status: "canceled",
        adjustments: [
          ...order.adjustments,
          { id: nextAdjustmentId(order), type: "cancellation", status: "completed", occurred_at: nowIso }
        ]
      })
    case "Ship": {
      const base: Fulfillment = {
        id: nextFulfillmentId(order),
        type: "shipping",
        status: "shipped",
        line_items: allLinesReference(order),
        carrier: command.carrier,
        tracking_number: command.tracking_number,
        ...(command.tracking_url !== undefined ? { tracking_url: command.tracking_url } : {}),
        events: []
      }
      return Either.right({
        ...order,
        status: "shipped",
        line_items: allShipped(order),
        fulfillments: [...order.fulfillments, withEvent(base, "shipped", nowIso)]
      })
    }
    case "Fulfill": {
      if (from === "shipped") {
        return Either.right({
          ...order,
          status: "fulfilled",
          fulfillments: order.fulfillments.map((f) =>
            f.status === "delivered" || f.status === "canceled"
              ? f
              : withEvent({ ...f, status: "delivered" }, "delivered", nowIso)
          )
        })
      }
      // confirmed → fulfilled: only when nothing needs shipping.
      if (!isAllDigital(order)) return invalid
      const digital: Fulfillment = {
        id: nextFulfillmentId(order),
        type: "digital",
        status: "delivered",
        line_items: allLinesReference(order),
        events: []
      }
      return Either.right({
        ...order,
        status: "fulfilled",
        line_items: allShipped(order),
        fulfillments: [...order.fulfillments, withEvent(digital, "delivered", nowIso)]
      })
    }
  }
}
