/**
 * What a PaymentIntent's state means for the payment attempt it was made for, and how Stripe's
 * refusals become the checkout's payment failures. Pure: the provider (`stripe-payment-provider.ts`)
 * acts on these decisions (confirm, cancel, answer).
 */
import { PaymentDeclined } from "../../payments/model/payment.ts"
import { authenticationNotAccepted } from "./three-d-secure.ts"

/** The fields of a PaymentIntent the decisions read (the SDK's object has them all). */
export interface IntentView {
  readonly id: string
  readonly status: string
  readonly amount: number
  readonly currency: string
  readonly last_payment_error?:
    | {
      readonly type?: string | undefined
      readonly code?: string | undefined
      readonly decline_code?: string | undefined
      readonly message?: string | undefined
    }
    | null
    | undefined
}

export type IntentState =
  /** Paid: the attempt's charge. */
  | { readonly _tag: "Succeeded" }
  /** Stripe is still deciding (or the amount is held for a capture this service never asks for). */
  | { readonly _tag: "Processing" }
  /** Can never be charged. */
  | { readonly _tag: "Canceled" }
  /** Confirmed and declined: cancel it (a decline leaves it confirmable) and answer the decline. */
  | {
    readonly _tag: "Declined"
    readonly code: string | undefined
    readonly declineCode: string | undefined
    readonly message: string | undefined
  }
  /**
   * The issuer asks for 3-D Secure: cancel it (the agent authenticates and pays with a new attempt,
   * or the payment is declined where it cannot).
   */
  | { readonly _tag: "NeedsAction" }
  /** Never confirmed: the request confirms it; the settlement cancels it. */
  | { readonly _tag: "Unconfirmed" }

export const intentState = (intent: IntentView): IntentState => {
  switch (intent.status) {
    case "succeeded":
      return { _tag: "Succeeded" }
    case "processing":
    case "requires_capture":
      return { _tag: "Processing" }
    case "canceled":
      return { _tag: "Canceled" }
    case "requires_action":
      return { _tag: "NeedsAction" }
    case "requires_payment_method": {
      const error = intent.last_payment_error
      return error === null || error === undefined
        ? { _tag: "Unconfirmed" }
        : { _tag: "Declined", code: error.code, declineCode: error.decline_code, message: error.message }
    }
    default:
      // requires_confirmation: a payment method is attached, no payment was tried.
      return { _tag: "Unconfirmed" }
  }
}

const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`)

export const THREE_DS_UNAVAILABLE =
  "The card's issuer requires 3-D Secure authentication, which could not be carried out for this payment. " +
  "Nothing was charged; pay with another card."

/**
 * A card decline as the checkout answers it (402), with Stripe's decline code kept for the merchant;
 * an authentication asked or failed is the presented result's failure when the payment carried one.
 */
export const declineOf = (
  decline: {
    readonly code: string | undefined
    readonly declineCode: string | undefined
    readonly message: string | undefined
  },
  authenticated = false
): PaymentDeclined => {
  const why = decline.declineCode ?? decline.code
  if (why === "authentication_required" || decline.code === "payment_intent_authentication_failure") {
    return authenticated ? authenticationNotAccepted() : needsActionDecline()
  }
  const message = `${sentence(decline.message ?? "The card was declined.")} Nothing was charged; pay with another card.`
  return new PaymentDeclined({
    reason: why === "insufficient_funds" ? "insufficient_funds" : "card_declined",
    message,
    ...(why === undefined ? {} : { declineCode: why })
  })
}

export const needsActionDecline = (): PaymentDeclined =>
  new PaymentDeclined({
    reason: "authentication_unavailable",
    message: THREE_DS_UNAVAILABLE,
    declineCode: "authentication_required"
  })

/**
 * A 400/404 of a payment call: Stripe is busy (`lock_timeout`), the PaymentIntent moved on (read it
 * again), or else the credential cannot pay as asked — a token gone, revoked, expired, used up or for
 * another currency, an amount it does not allow — a 422 for the agent.
 */
export const refusalKind = (refused: { readonly code: string | undefined }) =>
  refused.code === "lock_timeout" || refused.code === "rate_limit"
    ? "busy" as const
    : refused.code === "payment_intent_unexpected_state"
    ? "state" as const
    : "credential" as const

export const credentialRefusal = (message: string): string =>
  `The shared payment token cannot pay for this checkout session: ${sentence(message)}`
