/**
 * The fake Stripe's refunds against the API reference ("Refunds", "The Charge object"): partial and
 * full refunds by PaymentIntent or charge, the charge's `amount_refunded` and `refunded`, and the
 * refusals — more than is left, already refunded, nothing to refund, a disputed charge.
 */
import { describe, expect, it } from "@effect/vitest"
import Stripe from "stripe"
import { payWith, rejection, sdk, useFake } from "./stripe-fake-fixtures.ts"

const fake = useFake()

const paid = async (amount: number) => sdk(fake()).paymentIntents.create(payWith(fake().grantToken().id, amount))

describe("fake Stripe: refunds", () => {
  it("a partial refund, then the rest: the charge ends fully refunded", async () => {
    const stripe = sdk(fake())
    const intent = await paid(5000)
    const partial = await stripe.refunds.create({
      payment_intent: intent.id,
      amount: 1500,
      reason: "requested_by_customer",
      metadata: { order_id: "ord_1" }
    })
    expect(partial.id).toMatch(/^re_/)
    expect(partial).toMatchObject({
      object: "refund",
      amount: 1500,
      charge: intent.latest_charge,
      payment_intent: intent.id,
      currency: "usd",
      reason: "requested_by_customer",
      metadata: { order_id: "ord_1" },
      status: "succeeded"
    })
    const half = await stripe.charges.retrieve(intent.latest_charge as string)
    expect(half).toMatchObject({ amount_refunded: 1500, refunded: false })
    const rest = await stripe.refunds.create({ charge: intent.latest_charge as string })
    expect(rest.amount).toBe(3500)
    expect(await stripe.charges.retrieve(intent.latest_charge as string)).toMatchObject({
      amount_refunded: 5000,
      refunded: true
    })
    expect(await stripe.refunds.retrieve(partial.id)).toMatchObject({ id: partial.id, amount: 1500 })
    expect(fake().refunds().filter((r) => r.payment_intent === intent.id).map((r) => r.amount)).toEqual([1500, 3500])
  })

  it("refunding more than is left fails; a fully refunded charge cannot be refunded again", async () => {
    const stripe = sdk(fake())
    const intent = await paid(2000)
    const over = await rejection(stripe.refunds.create({ payment_intent: intent.id, amount: 2001 }))
    expect(over).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(over).toMatchObject({ code: "amount_too_large", param: "amount" })
    await stripe.refunds.create({ payment_intent: intent.id })
    const again = await rejection(stripe.refunds.create({ payment_intent: intent.id, amount: 1 }))
    expect(again.code).toBe("charge_already_refunded")
  })

  it("a PaymentIntent without a successful charge has nothing to refund", async () => {
    const stripe = sdk(fake())
    const open = await stripe.paymentIntents.create({ amount: 1000, currency: "usd" })
    expect((await rejection(stripe.refunds.create({ payment_intent: open.id }))).code).toBe("charge_not_refundable")
    expect((await rejection(stripe.refunds.create({ payment_intent: "pi_missing" }))).code).toBe("resource_missing")
    expect((await rejection(stripe.refunds.create({}))).code).toBe("parameter_missing")
    const missing = await rejection(stripe.refunds.retrieve("re_missing"))
    expect(missing).toMatchObject({ statusCode: 404, code: "resource_missing" })
  })

  it("a disputed charge cannot be refunded while the dispute is open", async () => {
    const stripe = sdk(fake())
    const intent = await paid(1800)
    const dispute = fake().openDispute(intent.id, "fraudulent")
    expect(dispute).toMatchObject({
      object: "dispute",
      charge: intent.latest_charge,
      status: "needs_response",
      amount: 1800
    })
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).disputed).toBe(true)
    expect((await rejection(stripe.refunds.create({ payment_intent: intent.id }))).code).toBe("charge_disputed")
    expect(fake().closeDispute(dispute.id, "won").status).toBe("won")
  })

  it("lists a PaymentIntent's refunds newest first, paged with starting_after; the SDK's auto-paging reads them all", async () => {
    const stripe = sdk(fake())
    const intent = await paid(3000)
    const other = await paid(1000)
    const made = []
    for (const amount of [100, 200, 300]) made.push(await stripe.refunds.create({ payment_intent: intent.id, amount }))
    await stripe.refunds.create({ payment_intent: other.id, amount: 50 })
    const first = await stripe.refunds.list({ payment_intent: intent.id, limit: 2 })
    expect(first).toMatchObject({ object: "list", has_more: true, url: "/v1/refunds" })
    expect(first.data.map((r) => r.amount)).toEqual([300, 200])
    const next = await stripe.refunds.list({ payment_intent: intent.id, limit: 2, starting_after: first.data[1]!.id })
    expect(next.has_more).toBe(false)
    expect(next.data.map((r) => r.id)).toEqual([made[0]!.id])
    const all = await stripe.refunds.list({ payment_intent: intent.id, limit: 1 }).autoPagingToArray({ limit: 10 })
    expect(all.map((r) => r.amount)).toEqual([300, 200, 100])
    const byCharge = await stripe.refunds.list({ charge: other.latest_charge as string })
    expect(byCharge.data.map((r) => r.amount)).toEqual([50])
    expect((await rejection(stripe.refunds.list({ limit: 101 }))).param).toBe("limit")
  })
})
