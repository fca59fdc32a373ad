/**
 * The fake Stripe's PaymentIntents against the API reference ("Payment Intents", "The PaymentIntent
 * object", "Errors"), driven by the real `stripe` SDK: a token that succeeds, is declined, needs
 * 3-D Secure or stays processing; two-step confirm; manual capture; cancel; search by metadata.
 */
import { describe, expect, it } from "@effect/vitest"
import Stripe from "stripe"
import { payWith, rejection, sdk, useFake, withToken } from "./stripe-fake-fixtures.ts"

const fake = useFake()

describe("fake Stripe: PaymentIntents", () => {
  it("create with confirm=true and a token that succeeds: succeeded, with a charge for the amount", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "succeeds", maxAmount: 5000 })
    const intent = await stripe.paymentIntents.create(payWith(token.id, 2599, { expand: ["latest_charge"] }))
    expect(intent.id).toMatch(/^pi_[A-Za-z0-9]{24}$/)
    expect(intent).toMatchObject({
      object: "payment_intent",
      status: "succeeded",
      amount: 2599,
      amount_received: 2599,
      currency: "usd",
      metadata: { checkout_session_id: "cs_test_1" },
      last_payment_error: null,
      next_action: null,
      livemode: false
    })
    const charge = intent.latest_charge as Stripe.Charge
    expect(charge).toMatchObject({ object: "charge", amount: 2599, status: "succeeded", paid: true, refunded: false })
    expect(charge.id).toMatch(/^ch_/)
    expect(fake().paymentIntent(intent.id).latest_charge).toBe(charge.id)
    const used = await stripe.rawRequest("GET", `/v1/shared_payment/granted_tokens/${token.id}`)
    expect(used).toMatchObject({ usage_details: { amount_captured: { value: 2599, currency: "usd" } } })
  })

  it("create, then confirm: requires_confirmation until confirmed", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken()
    const created = await stripe.paymentIntents.create({
      amount: 1000,
      currency: "usd",
      payment_method_data: withToken(token.id)
    })
    expect(created.status).toBe("requires_confirmation")
    const confirmed = await stripe.paymentIntents.confirm(created.id)
    expect(confirmed.status).toBe("succeeded")
    const again = await rejection(stripe.paymentIntents.confirm(created.id))
    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(again.code).toBe("payment_intent_unexpected_state")
  })

  it("declined: 402 card_error with code, decline_code, message and the PaymentIntent", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "declines", declineCode: "insufficient_funds" })
    const error = await rejection(stripe.paymentIntents.create(payWith(token.id, 1500)))
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect(error).toMatchObject({
      statusCode: 402,
      code: "card_declined",
      decline_code: "insufficient_funds",
      message: "Your card has insufficient funds."
    })
    expect(error.payment_intent).toMatchObject({ status: "requires_payment_method", amount: 1500 })
    expect(error.payment_intent.last_payment_error).toMatchObject({
      type: "card_error",
      decline_code: "insufficient_funds"
    })
    const stored = fake().paymentIntent(error.payment_intent.id)
    expect(stored.status).toBe("requires_payment_method")
    expect(fake().charges().find((c) => c.id === stored.latest_charge)).toMatchObject({
      status: "failed",
      failure_code: "card_declined"
    })
    const generic = await rejection(
      stripe.paymentIntents.create(
        payWith(fake().grantToken({ behavior: "declines", declineCode: "card_declined" }).id, 1500)
      )
    )
    expect(generic).toMatchObject({
      code: "card_declined",
      decline_code: "generic_decline",
      message: "Your card was declined."
    })
  })

  it("requires_action: use_stripe_sdk without a return_url, redirect_to_url with one; completing it succeeds", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "requires_action" })
    const sdkAction = await stripe.paymentIntents.create(payWith(token.id, 1200))
    expect(sdkAction.status).toBe("requires_action")
    expect(sdkAction.next_action).toMatchObject({
      type: "use_stripe_sdk",
      use_stripe_sdk: { type: "three_d_secure_redirect" }
    })
    expect(fake().completeAction(sdkAction.id, "succeeded").status).toBe("succeeded")

    const redirect = await stripe.paymentIntents.create(
      payWith(token.id, 1200, { return_url: "https://shop.test/back" })
    )
    expect(redirect.next_action).toMatchObject({
      type: "redirect_to_url",
      redirect_to_url: { return_url: "https://shop.test/back" }
    })
    // The redirect page finishes authentication and sends the customer back.
    const page = await fetch(`${redirect.next_action!.redirect_to_url!.url}?outcome=failed`, { redirect: "manual" })
    expect(page.status).toBe(302)
    expect(page.headers.get("location")).toBe("https://shop.test/back")
    const failed = await stripe.paymentIntents.retrieve(redirect.id)
    expect(failed.status).toBe("requires_payment_method")
    expect(failed.last_payment_error?.code).toBe("payment_intent_authentication_failure")
  })

  it("error_on_requires_action=true fails the attempt instead of asking for 3-D Secure", async () => {
    const token = fake().grantToken({ behavior: "requires_action" })
    const error = await rejection(
      sdk(fake()).paymentIntents.create(payWith(token.id, 1200, { error_on_requires_action: true }))
    )
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect(error.decline_code).toBe("authentication_required")
  })

  it("processing, then settled by the test: succeeded or back to requires_payment_method", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "processing" })
    const first = await stripe.paymentIntents.create(payWith(token.id, 800))
    expect(first.status).toBe("processing")
    expect(first.amount_received).toBe(0)
    fake().settleProcessing(first.id, "succeeded")
    expect(await stripe.paymentIntents.retrieve(first.id)).toMatchObject({ status: "succeeded", amount_received: 800 })

    const second = await stripe.paymentIntents.create(payWith(token.id, 800))
    fake().settleProcessing(second.id, "failed")
    const failed = await stripe.paymentIntents.retrieve(second.id)
    expect(failed.status).toBe("requires_payment_method")
    expect(failed.last_payment_error?.type).toBe("card_error")
  })

  it("manual capture: requires_capture, then captured", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken()
    const held = await stripe.paymentIntents.create(payWith(token.id, 3000, { capture_method: "manual" }))
    expect(held).toMatchObject({ status: "requires_capture", amount_capturable: 3000, amount_received: 0 })
    const captured = await stripe.paymentIntents.capture(held.id, { amount_to_capture: 2500 })
    expect(captured).toMatchObject({ status: "succeeded", amount_received: 2500, amount_capturable: 0 })
  })

  it("cancel with a cancellation_reason; a succeeded one cannot be canceled", async () => {
    const stripe = sdk(fake())
    const open = await stripe.paymentIntents.create({ amount: 900, currency: "usd" })
    expect(open.status).toBe("requires_payment_method")
    const canceled = await stripe.paymentIntents.cancel(open.id, { cancellation_reason: "abandoned" })
    expect(canceled).toMatchObject({ status: "canceled", cancellation_reason: "abandoned" })
    expect(canceled.canceled_at).toBeTypeOf("number")

    const paid = await stripe.paymentIntents.create(payWith(fake().grantToken().id, 900))
    const error = await rejection(stripe.paymentIntents.cancel(paid.id))
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(error.code).toBe("payment_intent_unexpected_state")
    expect(error.message).toContain("status of succeeded")
    expect(error.payment_intent.status).toBe("succeeded")
    const badReason = await rejection(stripe.paymentIntents.cancel(open.id, { cancellation_reason: "bored" as any }))
    expect(badReason.param).toBe("cancellation_reason")
  })

  it("search by metadata equality, newest first, with AND", async () => {
    const stripe = sdk(fake())
    const session = `cs_search_${Date.now()}`
    const token = fake().grantToken()
    const older = await stripe.paymentIntents.create(
      payWith(token.id, 700, { metadata: { checkout_session_id: session } })
    )
    const newer = await stripe.paymentIntents.create({
      amount: 700,
      currency: "usd",
      metadata: { checkout_session_id: session }
    })
    await stripe.paymentIntents.create({ amount: 700, currency: "usd", metadata: { checkout_session_id: "other" } })
    const found = await stripe.paymentIntents.search({ query: `metadata['checkout_session_id']:'${session}'` })
    expect(found.data.map((pi) => pi.id)).toEqual([newer.id, older.id])
    const succeeded = await stripe.paymentIntents.search({
      query: `metadata['checkout_session_id']:'${session}' AND status:'succeeded'`
    })
    expect(succeeded.data.map((pi) => pi.id)).toEqual([older.id])
    const error = await rejection(stripe.paymentIntents.search({ query: "metadata['a']:'b' AND x:1 OR y:2" }))
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
  })

  it("amounts below Stripe's minimum charge are refused", async () => {
    const error = await rejection(sdk(fake()).paymentIntents.create({ amount: 20, currency: "usd" }))
    expect(error).toMatchObject({ code: "amount_too_small", param: "amount" })
  })
})
