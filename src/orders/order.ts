/**
 * The order (CONTRACT §8): the full object carried by order events and returned by the merchant's
 * order routes, and the pure state machine that moves it.
 *
 * Shape: `{type: "order", id, checkout_session_id, permalink_url, status, refunds, line_items,
 * fulfillments, adjustments, totals}`. The interface document fixes `type`, `id`,
 * `checkout_session_id`, `permalink_url`, `status`, `refunds` and the sample line item (id, title,
 * quantity {ordered, shipped}, unit_price, subtotal). The rest follows the ACP "Enhanced Order
 * Support" RFC where it does not contradict the interface document:
 *
 * - Line items also carry `product_id`, `kind` (`physical` | `digital`, needed to decide whether a
 *   confirmed order may be fulfilled without shipping), `tax` and `total`.
 * - Fulfillments: `{id: "ful_<n>", type: shipping | digital, status, line_items: [{id, quantity}],
 *   carrier?, tracking_number?, tracking_url?, events: [{id, type, occurred_at}]}`. `Ship` records a
 *   `shipping` fulfillment (status `shipped`, one `shipped` event); `Fulfill` marks every
 *   fulfillment `delivered` (one `delivered` event each) or, for an all-digital confirmed order,
 *   records a `digital` fulfillment already `delivered`.
 * - Adjustments are an append-only log: every refund adds `{id: "adj_<n>", type: "refund"
 *   (original_payment) | "credit" (store_credit), status: "completed", occurred_at, amount}`; a
 *   cancel adds `{type: "cancellation", status: "completed", occurred_at}` without amount.
 * - Totals are the checkout totals at completion (the `total` entry stays the amount charged);
 *   once anything is refunded an `amount_refunded` entry (Σ refunds) is appended / kept current.
 *
 * Ids inside one order (`ful_<n>`, `adj_<n>`, `ful_<n>_ev_<m>`) are sequence numbers, so the
 * reducer stays a pure function of (order, command, now).
 */
import { Data, Either, Schema } from "effect"
import type { LineItem, Total } from "../checkout/checkout-schemas.ts"
import { Amount, BoundedString, optional, PositiveAmount, Timestamp } from "../shared/schema-helpers.ts"

// ---------------------------------------------------------------------------------------------
// Schemas

export const OrderStatus = Schema.Literal("created", "manual_review", "confirmed", "canceled", "shipped", "fulfilled")
export type OrderStatus = typeof OrderStatus.Type
export const ORDER_STATUSES: ReadonlyArray<OrderStatus> = OrderStatus.literals

export const RefundType = Schema.Literal("store_credit", "original_payment")
export type RefundType = typeof RefundType.Type

export const Refund = Schema.Struct({
  type: RefundType,
  amount: Amount
}).annotations({ identifier: "Refund" })
export type Refund = typeof Refund.Type

export const OrderLineItemKind = Schema.Literal("physical", "digital")
export type OrderLineItemKind = typeof OrderLineItemKind.Type

export const OrderLineItemQuantity = Schema.Struct({
  ordered: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" })),
  shipped: Schema.Int.pipe(Schema.nonNegative({ message: () => "must be a non-negative integer" }))
}).annotations({ identifier: "OrderLineItemQuantity" })
export type OrderLineItemQuantity = typeof OrderLineItemQuantity.Type

export const OrderLineItem = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  product_id: Schema.String,
  kind: OrderLineItemKind,
  quantity: OrderLineItemQuantity,
  unit_price: Amount,
  subtotal: Amount,
  tax: Amount,
  total: Amount
}).annotations({ identifier: "OrderLineItem" })
export type OrderLineItem = typeof OrderLineItem.Type

export const LineItemReference = Schema.Struct({
  id: Schema.String,
  quantity: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
}).annotations({ identifier: "LineItemReference" })
export type LineItemReference = typeof LineItemReference.Type

export const FulfillmentType = Schema.Literal("shipping", "digital")
export type FulfillmentType = typeof FulfillmentType.Type

/** ACP fulfillment statuses; this service sets `shipped` and `delivered` (and `canceled` never yet). */
export const FulfillmentStatus = Schema.Literal(
  "pending",
  "processing",
  "shipped",
  "in_transit",
  "out_for_delivery",
  "delivered",
  "failed",
  "canceled"
)
export type FulfillmentStatus = typeof FulfillmentStatus.Type

export const FulfillmentEventType = Schema.Literal("shipped", "delivered")
export type FulfillmentEventType = typeof FulfillmentEventType.Type

export const FulfillmentEvent = Schema.Struct({
  id: Schema.String,
  type: FulfillmentEventType,
  occurred_at: Timestamp
}).annotations({ identifier: "FulfillmentEvent" })
export type FulfillmentEvent = typeof FulfillmentEvent.Type

export const Fulfillment = Schema.Struct({
  id: Schema.String,
  type: FulfillmentType,
  status: FulfillmentStatus,
  line_items: Schema.Array(LineItemReference),
  carrier: optional(Schema.String),
  tracking_number: optional(Schema.String),
  tracking_url: optional(Schema.String),
  events: Schema.Array(FulfillmentEvent)
}).annotations({ identifier: "Fulfillment" })
export type Fulfillment = typeof Fulfillment.Type

export const AdjustmentType = Schema.Literal("refund", "credit", "cancellation")
export type AdjustmentType = typeof AdjustmentType.Type

export const Adjustment = Schema.Struct({
  id: Schema.String,
  type: AdjustmentType,
  status: Schema.Literal("completed"),
  occurred_at: Timestamp,
  amount: optional(Amount)
}).annotations({ identifier: "Adjustment" })
export type Adjustment = typeof Adjustment.Type

/** Checkout total types plus `amount_refunded` (ACP orders RFC). */
export const OrderTotalType = Schema.Literal(
  "items_base_amount",
  "items_discount",
  "subtotal",
  "discount",
  "fulfillment",
  "tax",
  "fee",
  "total",
  "amount_refunded"
)
export type OrderTotalType = typeof OrderTotalType.Type

export const OrderTotal = Schema.Struct({
  type: OrderTotalType,
  display_text: Schema.String,
  amount: Amount
}).annotations({ identifier: "OrderTotal" })
export type OrderTotal = typeof OrderTotal.Type

/**
 * The full order. Named `Order` here; `checkout.ts` also exports a (short) `Order`
 * `{id, checkout_session_id, permalink_url}` for the complete response — see `toOrderSummary`.
 */
export const Order = Schema.Struct({
  type: Schema.Literal("order"),
  id: Schema.String,
  checkout_session_id: Schema.String,
  permalink_url: Schema.String,
  status: OrderStatus,
  refunds: Schema.Array(Refund),
  line_items: Schema.Array(OrderLineItem),
  fulfillments: Schema.Array(Fulfillment),
  adjustments: Schema.Array(Adjustment),
  totals: Schema.Array(OrderTotal)
}).annotations({ identifier: "FullOrder" })
export type Order = typeof Order.Type

/** Merchant request bodies for the commands that carry data (for the order routes). */
export const ShipRequest = Schema.Struct({
  carrier: BoundedString(128),
  tracking_number: BoundedString(128),
  tracking_url: optional(BoundedString(2048))
}).annotations({ identifier: "ShipRequest" })
export type ShipRequest = typeof ShipRequest.Type

export const RefundRequest = Schema.Struct({
  type: RefundType,
  amount: PositiveAmount
}).annotations({ identifier: "RefundRequest" })
export type RefundRequest = typeof RefundRequest.Type

// ---------------------------------------------------------------------------------------------
// Commands and errors

export type OrderCommand = Data.TaggedEnum<{
  Confirm: {}
  /** → manual_review */
  HoldForReview: {}
  /** confirmed → shipped; records a shipping fulfillment covering every line. */
  Ship: { readonly carrier: string; readonly tracking_number: string; readonly tracking_url?: string }
  /** shipped → fulfilled, or confirmed → fulfilled when every line is digital. */
  Fulfill: {}
  Cancel: {}
  Refund: { readonly type: RefundType; readonly amount: number }
}>
export const OrderCommand = Data.taggedEnum<OrderCommand>()

/** The command's target status is not reachable from the current one → 409 on the order routes. */
export class InvalidOrderTransition extends Data.TaggedError("InvalidOrderTransition")<{
  readonly from: OrderStatus
  readonly to: OrderStatus
}> {
  override get message(): string {
    return `an order in status ${this.from} cannot become ${this.to}`
  }
}

/** The refund would bring the refunded sum above the order total. `remaining` may still be refunded. */
export class RefundExceedsTotal extends Data.TaggedError("RefundExceedsTotal")<{
  readonly remaining: number
}> {
  override get message(): string {
    return `refund exceeds the refundable remainder of ${this.remaining}`
  }
}

/** Refunds are not possible while the order is `created`. */
export class RefundNotAllowed extends Data.TaggedError("RefundNotAllowed")<{
  readonly status: OrderStatus
}> {
  override get message(): string {
    return `refunds are not allowed while the order is ${this.status}`
  }
}

/** The refund amount is not a positive integer (at most MAX_AMOUNT). */
export class InvalidRefundAmount extends Data.TaggedError("InvalidRefundAmount")<{
  readonly amount: number
}> {
  override get message(): string {
    return "refund amount must be a positive integer in minor units"
  }
}

export type OrderError = InvalidOrderTransition | RefundExceedsTotal | RefundNotAllowed | InvalidRefundAmount

// ---------------------------------------------------------------------------------------------
// Transitions

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
      return undefined
  }
}

const allLinesReference = (order: Order): ReadonlyArray<LineItemReference> =>
  order.line_items.map((line) => ({ id: line.id, quantity: line.quantity.ordered }))

const allShipped = (order: Order): ReadonlyArray<OrderLineItem> =>
  order.line_items.map((line) => ({ ...line, quantity: { ordered: line.quantity.ordered, shipped: line.quantity.ordered } }))

const nextFulfillmentId = (order: Order): string => `ful_${order.fulfillments.length + 1}`
const nextAdjustmentId = (order: Order): string => `adj_${order.adjustments.length + 1}`

const withEvent = (fulfillment: Fulfillment, type: FulfillmentEventType, nowIso: string): Fulfillment => ({
  ...fulfillment,
  events: [...fulfillment.events, { id: `${fulfillment.id}_ev_${fulfillment.events.length + 1}`, type, occurred_at: nowIso }]
})

const upsertRefundedTotal = (totals: ReadonlyArray<OrderTotal>, amount: number): ReadonlyArray<OrderTotal> => {
  const entry: OrderTotal = { type: "amount_refunded", display_text: "Refunded", amount }
  return totals.some((t) => t.type === "amount_refunded")
    ? totals.map((t) => (t.type === "amount_refunded" ? entry : t))
    : [...totals, entry]
}

/**
 * The order state machine: a pure function of (order, command, now). `nowIso` (RFC 3339) stamps
 * fulfillment events and adjustments. Never mutates its input.
 */
export const applyOrderCommand = (
  order: Order,
  command: OrderCommand,
  nowIso: string
): Either.Either<Order, OrderError> => {
  if (command._tag === "Refund") {
    if (order.status === "created") return Either.left(new RefundNotAllowed({ status: order.status }))
    const amount = command.amount
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_REFUND) {
      return Either.left(new InvalidRefundAmount({ amount }))
    }
    const remaining = refundableRemainder(order)
    if (amount > remaining) return Either.left(new RefundExceedsTotal({ remaining }))
    const refunds: ReadonlyArray<Refund> = [...order.refunds, { type: command.type, amount }]
    const adjustment: Adjustment = {
      id: nextAdjustmentId(order),
      type: command.type === "original_payment" ? "refund" : "credit",
      status: "completed",
      occurred_at: nowIso,
      amount
    }
    return Either.right({
      ...order,
      refunds,
      adjustments: [...order.adjustments, adjustment],
      totals: upsertRefundedTotal(order.totals, refundedAmount({ ...order, refunds }))
    })
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
            f.status === "delivered" || f.status === "canceled" ? f : withEvent({ ...f, status: "delivered" }, "delivered", nowIso)
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

// ---------------------------------------------------------------------------------------------
// Creation

/** A checkout line item plus what the catalog knows of its product. */
export type OrderSourceLineItem = LineItem & {
  readonly title: string
  readonly kind: OrderLineItemKind
}

export interface MakeOrderInput {
  readonly id: string
  readonly checkoutSessionId: string
  readonly permalinkUrl: string
  readonly lineItems: ReadonlyArray<OrderSourceLineItem>
  readonly totals: ReadonlyArray<Total>
}

/**
 * The initial `created` order of a completed checkout: no refunds, fulfillments or adjustments,
 * `quantity.shipped = 0`, `unit_price = base_amount / quantity` (exact: base_amount is unit price ×
 * quantity), totals copied from the session.
 */
export const makeOrder = (input: MakeOrderInput): Order => ({
  type: "order",
  id: input.id,
  checkout_session_id: input.checkoutSessionId,
  permalink_url: input.permalinkUrl,
  status: "created",
  refunds: [],
  line_items: input.lineItems.map((line) => ({
    id: line.id,
    title: line.title,
    product_id: line.item.id,
    kind: line.kind,
    quantity: { ordered: line.item.quantity, shipped: 0 },
    unit_price: line.item.quantity > 0 ? Math.round(line.base_amount / line.item.quantity) : line.base_amount,
    subtotal: line.subtotal,
    tax: line.tax,
    total: line.total
  })),
  fulfillments: [],
  adjustments: [],
  totals: input.totals.map((t) => ({ type: t.type, display_text: t.display_text, amount: t.amount }))
})

/** The short order of the checkout complete response (`checkout.ts` `Order`). */
export const toOrderSummary = (order: Order): { id: string; checkout_session_id: string; permalink_url: string } => ({
  id: order.id,
  checkout_session_id: order.checkout_session_id,
  permalink_url: order.permalink_url
})
