/** What the Stripe provider sends for one payment attempt: the same for the request and the settlement. */
import type Stripe from "stripe"
import type { ThreeDSecureParams } from "./model/three-d-secure.ts"

/** What a PaymentIntent is made of: the same for the request and the settlement, so a replay matches. */
export interface Paying {
  readonly sessionId: string
  readonly idempotencyKey: string
  readonly amount: number
  readonly currency: string
  readonly token: string
  /** JSONPath of the token in the complete request (the settlement's refusals are not answered). */
  readonly param: string
  /**
   * The agent's authentication, sent with the confirm (never the create: the settlement replays the
   * create without it, and never confirms).
   */
  readonly threeDSecure?: ThreeDSecureParams | undefined
}

export const createParams = (paying: Paying): Stripe.PaymentIntentCreateParams => ({
  amount: paying.amount,
  currency: paying.currency.toLowerCase(),
  // The token is a card; no redirect is possible for an agent's buyer (no `return_url`).
  automatic_payment_methods: { enabled: true, allow_redirects: "never" },
  // The SDK's types do not know the shared payment token parameter yet.
  payment_method_data: {
    type: "card",
    shared_payment_granted_token: paying.token
  } as unknown as Stripe.PaymentIntentCreateParams.PaymentMethodData,
  metadata: { checkout_session_id: paying.sessionId, payment_attempt: paying.idempotencyKey }
})

export const confirmParams = (paying: Paying): Stripe.PaymentIntentConfirmParams =>
  paying.threeDSecure === undefined ? {} : { payment_method_options: { card: { three_d_secure: paying.threeDSecure } } }
