import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { makeOrder, toOrderSummary } from "../../src/orders/model/order-from-checkout.ts"
import {
  applyOrderCommand,
  InvalidOrderTransition,
  InvalidRefundAmount,
  OrderCommand,
  refundableRemainder,
  RefundExceedsTotal,
  RefundNotAllowed
} from "../../src/orders/model/order-state-machine.ts"
import { Order, ORDER_STATUSES, type OrderLineItemKind, type OrderStatus } from "../../src/orders/model/order.ts"

const NOW = "2026-01-30T12:00:00.000Z"

const order = (kinds: ReadonlyArray<OrderLineItemKind> = ["physical", "digital"]): Order =>
  makeOrder({
    id: "ord_1",
    checkoutSessionId: "cs_1",
    permalinkUrl: "https://shop.example/orders/ord_1",
    lineItems: kinds.map((kind, i) => ({
      id: `li_${i + 1}`,
      title: `Product ${i + 1}`,
      kind,
      item: { id: `prod_${i + 1}`, quantity: 2 },
      base_amount: 2000,
      discount: 0,
      subtotal: 2000,
      tax: 100,
      total: 2100
    })),
    totals: [
      { type: "subtotal", display_text: "Subtotal", amount: 2000 * kinds.length },
      { type: "tax", display_text: "Tax", amount: 100 * kinds.length },
      { type: "total", display_text: "Total", amount: 2100 * kinds.length }
    ]
  })

const inStatus = (status: OrderStatus, kinds?: ReadonlyArray<OrderLineItemKind>): Order => ({ ...order(kinds), status })

const ship = OrderCommand.Ship({ carrier: "UPS", tracking_number: "1Z999", tracking_url: "https://ups.example/1Z999" })

const commands = {
  Confirm: { command: OrderCommand.Confirm(), to: "confirmed" },
  HoldForReview: { command: OrderCommand.HoldForReview(), to: "manual_review" },
  Ship: { command: ship, to: "shipped" },
  Fulfill: { command: OrderCommand.Fulfill(), to: "fulfilled" },
  Cancel: { command: OrderCommand.Cancel(), to: "canceled" }
} as const satisfies Record<string, { command: OrderCommand; to: OrderStatus }>

/** Allowed (from, command) pairs for an order with a physical line. */
const allowed = new Set([
  "created:Confirm",
  "created:HoldForReview",
  "created:Cancel",
  "manual_review:Confirm",
  "manual_review:Cancel",
  "confirmed:Ship",
  "confirmed:Cancel",
  "shipped:Fulfill"
])

describe("makeOrder", () => {
  it("builds a created order from checkout line items", () => {
    const o = order(["physical"])
    expect(o).toEqual({
      type: "order",
      id: "ord_1",
      checkout_session_id: "cs_1",
      permalink_url: "https://shop.example/orders/ord_1",
      status: "created",
      refunds: [],
      line_items: [
        {
          id: "li_1",
          title: "Product 1",
          product_id: "prod_1",
          kind: "physical",
          quantity: { ordered: 2, shipped: 0 },
          unit_price: 1000,
          subtotal: 2000,
          tax: 100,
          total: 2100
        }
      ],
      fulfillments: [],
      adjustments: [],
      totals: [
        { type: "subtotal", display_text: "Subtotal", amount: 2000 },
        { type: "tax", display_text: "Tax", amount: 100 },
        { type: "total", display_text: "Total", amount: 2100 }
      ]
    })
    expect(Schema.is(Order)(o)).toBe(true)
    expect(toOrderSummary(o)).toEqual({
      id: "ord_1",
      checkout_session_id: "cs_1",
      permalink_url: "https://shop.example/orders/ord_1"
    })
  })
})

describe("applyOrderCommand transitions", () => {
  const table = ORDER_STATUSES.flatMap((from) =>
    Object.entries(commands).map(([name, { command, to }]) => ({
      from,
      name,
      command,
      to,
      ok: allowed.has(`${from}:${name}`)
    }))
  )

  it.each(table.filter((row) => row.ok))("$from --$name--> $to is allowed", ({ from, command, to }) => {
    const result = applyOrderCommand(inStatus(from), command, NOW)
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) {
      expect(result.right.status).toBe(to)
      expect(Schema.is(Order)(result.right)).toBe(true)
    }
  })

  it.each(table.filter((row) => !row.ok))("$from --$name--> $to is rejected", ({ from, command, to }) => {
    const before = inStatus(from)
    const result = applyOrderCommand(before, command, NOW)
    expect(result).toEqual(Either.left(new InvalidOrderTransition({ from, to })))
    expect(before.status).toBe(from)
  })

  it("confirmed → fulfilled is allowed when every line is digital", () => {
    const result = applyOrderCommand(inStatus("confirmed", ["digital", "digital"]), OrderCommand.Fulfill(), NOW)
    const o = Either.getOrThrow(result)
    expect(o.status).toBe("fulfilled")
    expect(o.line_items.map((l) => l.quantity)).toEqual([
      { ordered: 2, shipped: 2 },
      { ordered: 2, shipped: 2 }
    ])
    expect(o.fulfillments).toEqual([
      {
        id: "ful_1",
        type: "digital",
        status: "delivered",
        line_items: [
          { id: "li_1", quantity: 2 },
          { id: "li_2", quantity: 2 }
        ],
        events: [{ id: "ful_1_ev_1", type: "delivered", occurred_at: NOW }]
      }
    ])
  })

  it("confirmed → fulfilled is rejected when some line is physical", () => {
    expect(applyOrderCommand(inStatus("confirmed", ["digital", "physical"]), OrderCommand.Fulfill(), NOW)).toEqual(
      Either.left(new InvalidOrderTransition({ from: "confirmed", to: "fulfilled" }))
    )
  })

  it("Ship records a fulfillment and marks every line shipped; Fulfill delivers it", () => {
    const shipped = Either.getOrThrow(applyOrderCommand(inStatus("confirmed"), ship, NOW))
    expect(shipped.line_items.every((l) => l.quantity.shipped === l.quantity.ordered)).toBe(true)
    expect(shipped.fulfillments).toEqual([
      {
        id: "ful_1",
        type: "shipping",
        status: "shipped",
        line_items: [
          { id: "li_1", quantity: 2 },
          { id: "li_2", quantity: 2 }
        ],
        carrier: "UPS",
        tracking_number: "1Z999",
        tracking_url: "https://ups.example/1Z999",
        events: [{ id: "ful_1_ev_1", type: "shipped", occurred_at: NOW }]
      }
    ])
    const later = "2026-02-02T09:00:00.000Z"
    const fulfilled = Either.getOrThrow(applyOrderCommand(shipped, OrderCommand.Fulfill(), later))
    expect(fulfilled.status).toBe("fulfilled")
    expect(fulfilled.fulfillments[0]?.status).toBe("delivered")
    expect(fulfilled.fulfillments[0]?.events).toEqual([
      { id: "ful_1_ev_1", type: "shipped", occurred_at: NOW },
      { id: "ful_1_ev_2", type: "delivered", occurred_at: later }
    ])
  })

  it("Ship without tracking_url leaves the key absent", () => {
    const shipped = Either.getOrThrow(
      applyOrderCommand(inStatus("confirmed"), OrderCommand.Ship({ carrier: "UPS", tracking_number: "1" }), NOW)
    )
    expect(shipped.fulfillments[0] && "tracking_url" in shipped.fulfillments[0]).toBe(false)
  })

  it("Cancel records a cancellation adjustment", () => {
    const canceled = Either.getOrThrow(applyOrderCommand(inStatus("confirmed"), OrderCommand.Cancel(), NOW))
    expect(canceled.adjustments).toEqual([{ id: "adj_1", type: "cancellation", status: "completed", occurred_at: NOW }])
  })
})

describe("a new buyer link", () => {
  it.each(ORDER_STATUSES)("in status %s replaces permalink_url and nothing else", (status) => {
    const before = inStatus(status)
    const url = "https://merchant.test/order-status/0123456789abcdefghijAB"
    const after = Either.getOrThrow(
      applyOrderCommand(before, OrderCommand.ReplacePermalink({ permalink_url: url }), NOW)
    )
    expect(after).toEqual({ ...before, permalink_url: url })
    expect(before.permalink_url).not.toBe(url)
  })
})

describe("refunds", () => {
  const refund = (type: "store_credit" | "original_payment", amount: number) => OrderCommand.Refund({ type, amount })

  it("are not allowed while created", () => {
    expect(applyOrderCommand(inStatus("created"), refund("original_payment", 100), NOW)).toEqual(
      Either.left(new RefundNotAllowed({ status: "created" }))
    )
  })

  it.each(ORDER_STATUSES.filter((s) => s !== "created"))("are allowed in status %s", (status) => {
    const o = Either.getOrThrow(applyOrderCommand(inStatus(status), refund("store_credit", 100), NOW))
    expect(o.status).toBe(status)
    expect(o.refunds).toEqual([{ type: "store_credit", amount: 100 }])
  })

  it("are recorded as refunds, adjustments and the amount_refunded total", () => {
    const o1 = Either.getOrThrow(applyOrderCommand(inStatus("confirmed"), refund("original_payment", 1000), NOW))
    const o2 = Either.getOrThrow(applyOrderCommand(o1, refund("store_credit", 500), NOW))
    expect(o2.refunds).toEqual([
      { type: "original_payment", amount: 1000 },
      { type: "store_credit", amount: 500 }
    ])
    expect(o2.adjustments).toEqual([
      { id: "adj_1", type: "refund", status: "completed", occurred_at: NOW, amount: 1000 },
      { id: "adj_2", type: "credit", status: "completed", occurred_at: NOW, amount: 500 }
    ])
    expect(o2.totals.filter((t) => t.type === "amount_refunded")).toEqual([
      { type: "amount_refunded", display_text: "Refunded", amount: 1500 }
    ])
    expect(o2.totals.find((t) => t.type === "total")?.amount).toBe(4200)
    expect(refundableRemainder(o2)).toBe(2700)
    expect(Schema.is(Order)(o2)).toBe(true)
  })

  it("may reach exactly the order total, never above", () => {
    const full = Either.getOrThrow(applyOrderCommand(inStatus("fulfilled"), refund("original_payment", 4200), NOW))
    expect(refundableRemainder(full)).toBe(0)
    expect(applyOrderCommand(full, refund("store_credit", 1), NOW)).toEqual(
      Either.left(new RefundExceedsTotal({ remaining: 0 }))
    )
    const partial = Either.getOrThrow(applyOrderCommand(inStatus("shipped"), refund("original_payment", 4000), NOW))
    expect(applyOrderCommand(partial, refund("original_payment", 201), NOW)).toEqual(
      Either.left(new RefundExceedsTotal({ remaining: 200 }))
    )
    expect(Either.isRight(applyOrderCommand(partial, refund("original_payment", 200), NOW))).toBe(true)
    expect(applyOrderCommand(inStatus("confirmed"), refund("original_payment", 4201), NOW)).toEqual(
      Either.left(new RefundExceedsTotal({ remaining: 4200 }))
    )
  })

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])("reject the amount %s", (amount) => {
    expect(applyOrderCommand(inStatus("confirmed"), refund("store_credit", amount), NOW)).toEqual(
      Either.left(new InvalidRefundAmount({ amount }))
    )
  })
})

describe("the payment provider's notifications", () => {
  const right = (result: Either.Either<Order, unknown>): Order => Either.getOrThrow(result)

  it("refunds it reports are recorded once each, by reference, in any status, without a remainder rule", () => {
    const created = inStatus("created")
    const once = right(applyOrderCommand(
      created,
      OrderCommand.RecordPaymentRefunds({
        refunds: [{ reference: "re_1", amount: 1000, request_reference: "req_a" }, { reference: "re_2", amount: 500 }]
      }),
      NOW
    ))
    expect(once.refunds).toEqual([{ type: "original_payment", amount: 1000 }, {
      type: "original_payment",
      amount: 500
    }])
    expect(once.adjustments).toEqual([
      {
        id: "adj_1",
        type: "refund",
        status: "completed",
        occurred_at: NOW,
        amount: 1000,
        payment_reference: "re_1",
        request_reference: "req_a"
      },
      { id: "adj_2", type: "refund", status: "completed", occurred_at: NOW, amount: 500, payment_reference: "re_2" }
    ])
    expect(once.totals.find((t) => t.type === "amount_refunded")?.amount).toBe(1500)
    // The same report again, or one listing more, adds only what is new; nothing new is the same order.
    const again = right(applyOrderCommand(
      once,
      OrderCommand.RecordPaymentRefunds({ refunds: [{ reference: "re_1", amount: 1000 }] }),
      NOW
    ))
    expect(again).toBe(once)
    const more = right(applyOrderCommand(
      once,
      OrderCommand.RecordPaymentRefunds({
        refunds: [{ reference: "re_2", amount: 500 }, { reference: "re_3", amount: 99_999 }]
      }),
      NOW
    ))
    expect(more.adjustments.map((a) => a.payment_reference)).toEqual(["re_1", "re_2", "re_3"])
    expect(refundableRemainder(more)).toBe(0)
    expect(Schema.is(Order)(more)).toBe(true)
  })

  it("a dispute is one adjustment: pending when opened, decided once, never reopened", () => {
    const confirmed = inStatus("confirmed")
    const dispute = (outcome: "open" | "won" | "lost") =>
      OrderCommand.RecordDispute({ reference: "dp_1", amount: 4200, reason: "fraudulent", outcome })
    const opened = right(applyOrderCommand(confirmed, dispute("open"), NOW))
    expect(opened.adjustments).toEqual([{
      id: "adj_1",
      type: "dispute",
      status: "pending",
      occurred_at: NOW,
      amount: 4200,
      reason: "fraudulent",
      payment_reference: "dp_1"
    }])
    expect(right(applyOrderCommand(opened, dispute("open"), NOW))).toBe(opened)
    const lost = right(applyOrderCommand(opened, dispute("lost"), "2026-02-01T00:00:00.000Z"))
    expect(lost.adjustments.map((a) => [a.id, a.status, a.occurred_at])).toEqual([
      ["adj_1", "completed", "2026-02-01T00:00:00.000Z"]
    ])
    expect(lost.refunds).toEqual([])
    expect(right(applyOrderCommand(lost, dispute("open"), NOW))).toBe(lost)
    expect(right(applyOrderCommand(lost, dispute("won"), NOW))).toBe(lost)
    // Decided before it was seen open: added decided.
    const won = right(applyOrderCommand(confirmed, dispute("won"), NOW))
    expect(won.adjustments.map((a) => [a.type, a.status])).toEqual([["dispute", "failed"]])
    expect(Schema.is(Order)(won)).toBe(true)
  })
})
