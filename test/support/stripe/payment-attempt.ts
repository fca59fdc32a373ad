/**
 * What confirming does to a PaymentIntent (API reference, "The PaymentIntent object", `status`):
 * success makes a Charge and moves it to `succeeded` (`requires_capture` with manual capture); a
 * decline makes a failed Charge, returns it to `requires_payment_method` with `last_payment_error`
 * and answers 402 `card_error`; 3-D Secure leaves it in `requires_action` with a `next_action`,
 * unless the confirmation carries an authentication made with a third-party provider
 * (`three-d-secure.ts`); some payments wait in `processing` until the test settles them. Each step appends the events
 * Stripe sends for it.
 */
import { newId } from "./clock.ts"
import { docUrl, StripeApiError } from "./errors.ts"
import { hold, recordCapture, release } from "./granted-tokens.ts"
import type { Charge, LastPaymentError, PaymentIntent } from "./objects.ts"
import { snapshot } from "./objects.ts"
import { declineOf } from "./scenarios.ts"
import { type FakeState, NO_REQUEST, type RequestContext, type Source } from "./state.ts"
import { authenticates, chargeThreeDSecure } from "./three-d-secure.ts"

export interface AttemptOptions {
  readonly returnUrl: string | undefined
  readonly errorOnRequiresAction: boolean
}

const newCharge = (state: FakeState, intent: PaymentIntent, status: Charge["status"]): Charge => {
  const source = state.sources.get(intent.id)
  const threeDSecure = state.threeDSecure.get(intent.id)
  const charge: Charge = {
    id: newId("ch"),
    object: "charge",
    amount: intent.amount,
    amount_captured: 0,
    amount_refunded: 0,
    captured: false,
    created: state.now(),
    currency: intent.currency,
    disputed: false,
    failure_code: null,
    failure_message: null,
    livemode: false,
    metadata: { ...intent.metadata },
    outcome: null,
    paid: false,
    payment_intent: intent.id,
    payment_method: intent.payment_method ?? newId("pm"),
    payment_method_details: {
      type: "card",
      card: {
        brand: source?.brand ?? "visa",
        last4: source?.last4 ?? "4242",
        three_d_secure: threeDSecure === undefined ? null : chargeThreeDSecure(threeDSecure)
      }
    },
    refunded: false,
    status
  }
  state.charges.set(charge.id, charge)
  intent.latest_charge = charge.id
  return charge
}

/** The charge is authorized: captured at once, or held for a manual capture. */
export const authorize = (state: FakeState, intent: PaymentIntent, request: RequestContext): void => {
  const charge = intent.latest_charge === null ? undefined : state.charges.get(intent.latest_charge)
  const pending = charge?.status === "pending" ? charge : newCharge(state, intent, "succeeded")
  const source = state.sources.get(intent.id)
  const manual = intent.capture_method === "manual"
  pending.status = "succeeded"
  pending.paid = true
  pending.captured = !manual
  pending.amount_captured = manual ? 0 : intent.amount
  pending.outcome = {
    network_status: "approved_by_network",
    reason: null,
    seller_message: "Payment complete.",
    type: "authorized"
  }
  intent.last_payment_error = null
  intent.next_action = null
  release(state, intent.id)
  if (manual) {
    intent.status = "requires_capture"
    intent.amount_capturable = intent.amount
    hold(state, intent.id, intent.amount)
    state.emit("charge.succeeded", pending, request)
    state.emit("payment_intent.amount_capturable_updated", intent, request)
    return
  }
  intent.status = "succeeded"
  intent.amount_received = intent.amount
  if (source?.tokenId) recordCapture(state, source.tokenId, intent.amount)
  state.emit("charge.succeeded", pending, request)
  state.emit("payment_intent.succeeded", intent, request)
}

const fail = (state: FakeState, intent: PaymentIntent, error: LastPaymentError, request: RequestContext): void => {
  intent.status = "requires_payment_method"
  intent.last_payment_error = error
  intent.next_action = null
  // A failed attempt detaches the payment method: the next confirm needs a new one.
  intent.payment_method = null
  release(state, intent.id)
  state.sources.delete(intent.id)
  state.emit("payment_intent.payment_failed", intent, request)
}

const declineCharge = (state: FakeState, intent: PaymentIntent, reason: string, request: RequestContext) => {
  const decline = declineOf(reason)
  const existing = intent.latest_charge === null ? undefined : state.charges.get(intent.latest_charge)
  const charge = existing?.status === "pending" ? existing : newCharge(state, intent, "failed")
  charge.status = "failed"
  charge.failure_code = decline.code
  charge.failure_message = decline.message
  charge.outcome = {
    network_status: "declined_by_network",
    reason: decline.declineCode,
    seller_message: "The bank did not return any further details with this decline.",
    type: "issuer_declined"
  }
  state.emit("charge.failed", charge, request)
  const error: LastPaymentError = {
    type: "card_error",
    code: decline.code,
    decline_code: decline.declineCode,
    message: decline.message,
    doc_url: docUrl(decline.code),
    charge: charge.id,
    payment_method: { id: charge.payment_method, object: "payment_method", type: "card" }
  }
  fail(state, intent, error, request)
  return error
}

/** A decline answers 402 with the error and the PaymentIntent as it now is (Errors, `payment_intent`). */
const declined = (intent: PaymentIntent, error: LastPaymentError): StripeApiError =>
  new StripeApiError(402, {
    ...error,
    payment_intent: snapshot(intent),
    request_log_url: `https://dashboard.stripe.com/test/logs`
  })

export const attempt = (
  state: FakeState,
  intent: PaymentIntent,
  source: Source,
  options: AttemptOptions,
  request: RequestContext
): void => {
  intent.payment_method = newId("pm")
  state.sources.set(intent.id, source)
  const behavior = source.behavior
  switch (behavior.kind) {
    case "succeeds":
      return authorize(state, intent, request)
    case "declines":
      throw declined(intent, declineCharge(state, intent, behavior.declineCode, request))
    case "processing": {
      newCharge(state, intent, "pending")
      intent.status = "processing"
      hold(state, intent.id, intent.amount)
      state.emit("payment_intent.processing", intent, request)
      return
    }
    case "requires_action": {
      // The issuer takes an authentication made elsewhere in place of its own challenge.
      const authenticated = state.threeDSecure.get(intent.id)
      if (authenticated !== undefined && authenticates(authenticated)) return authorize(state, intent, request)
      if (options.errorOnRequiresAction) {
        throw declined(intent, declineCharge(state, intent, "authentication_required", request))
      }
      intent.status = "requires_action"
      const url = `${state.baseUrl}/fake/3ds/${intent.id}`
      intent.next_action = options.returnUrl === undefined
        ? {
          type: "use_stripe_sdk",
          use_stripe_sdk: { type: "three_d_secure_redirect", stripe_js: url, source: newId("src") }
        }
        : { type: "redirect_to_url", redirect_to_url: { url, return_url: options.returnUrl } }
      state.emit("payment_intent.requires_action", intent, request)
      return
    }
  }
}

/** Settles a `processing` payment as the payment method's network eventually does. */
export const settle = (state: FakeState, intent: PaymentIntent, outcome: "succeeded" | "failed"): void => {
  if (intent.status !== "processing") throw new Error(`${intent.id} is ${intent.status}, not processing`)
  if (outcome === "succeeded") return authorize(state, intent, NO_REQUEST)
  declineCharge(state, intent, "generic_decline", NO_REQUEST)
}

/** The customer finishes (or fails) 3-D Secure for a PaymentIntent in `requires_action`. */
export const finishAction = (state: FakeState, intent: PaymentIntent, outcome: "succeeded" | "failed"): void => {
  if (intent.status !== "requires_action") throw new Error(`${intent.id} is ${intent.status}, not requires_action`)
  if (outcome === "succeeded") return authorize(state, intent, NO_REQUEST)
  fail(state, intent, {
    type: "invalid_request_error",
    code: "payment_intent_authentication_failure",
    message: "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new " +
      "PaymentMethod to attempt to fulfill this PaymentIntent again.",
    doc_url: docUrl("payment_intent_authentication_failure")
  }, NO_REQUEST)
}
