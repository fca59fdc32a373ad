/**
 * 3-D Secure through Stripe, made by the agent with its own authentication provider: the agent's
 * result becomes Stripe's third-party 3-D Secure parameters of the confirm
 * (`payment_method_options[card][three_d_secure]`), and the card's scheme, for the metadata the
 * agent authenticates with, is read from the shared payment token Stripe shows. Pure.
 */
import type { AuthenticationResult } from "../../payments/model/issuer-authentication.ts"
import { PaymentDeclined } from "../../payments/model/payment.ts"

/** What Stripe is given of an authentication; Stripe and the issuer verify the cryptogram. */
export interface ThreeDSecureParams {
  readonly cryptogram: string
  /** The directory server's transaction id (3-D Secure 2's dsTransID). */
  readonly transaction_id: string
  readonly version: string
  readonly electronic_commerce_indicator: string
  /** The issuer's `transStatus` the outcome stands for. */
  readonly ares_trans_status: "Y" | "A"
}

const ARES_TRANS_STATUS = { authenticated: "Y", attempt_acknowledged: "A" } as const

/** The parameters of a result that authenticated; none for any other outcome (nothing to pay with). */
export const threeDSecureOf = (result: AuthenticationResult): ThreeDSecureParams | undefined => {
  const status = ARES_TRANS_STATUS[result.outcome as keyof typeof ARES_TRANS_STATUS]
  const details = result.outcome_details
  if (status === undefined || details === undefined) return undefined
  return {
    cryptogram: details.three_ds_cryptogram,
    transaction_id: details.transaction_id,
    version: details.version,
    electronic_commerce_indicator: details.electronic_commerce_indicator,
    ares_trans_status: status
  }
}

/** The card brand of a shared payment granted token as Stripe returns it (`payment_method_details.card.brand`). */
export const tokenCardBrand = (token: unknown): string | undefined => {
  const field = (value: unknown, key: string): unknown =>
    typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined
  const brand = field(field(field(token, "payment_method_details"), "card"), "brand")
  return typeof brand === "string" && brand !== "" ? brand : undefined
}

export const AUTHENTICATION_NOT_ACCEPTED =
  "The card's issuer did not accept the authentication presented. Nothing was charged; authenticate again, " +
  "or pay with another card."

/** Stripe still asks for authentication, or reports it failed, although the payment carried a result. */
export const authenticationNotAccepted = (): PaymentDeclined =>
  new PaymentDeclined({
    reason: "authentication_failed",
    message: AUTHENTICATION_NOT_ACCEPTED,
    declineCode: "authentication_required",
    param: "$.authentication_result"
  })
