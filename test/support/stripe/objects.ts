/**
 * The objects the fake keeps, in the shapes the API reference gives them (the subset of attributes
 * an integration reads; the rest of Stripe's attributes are left out). They are stored as the JSON
 * Stripe would return and mutated in place; a response or an event serializes a snapshot.
 */

export type Metadata = Record<string, string>

export type PaymentIntentStatus =
  | "requires_payment_method"
  | "requires_confirmation"
  | "requires_action"
  | "processing"
  | "requires_capture"
  | "succeeded"
  | "canceled"

export interface LastPaymentError {
  type: "card_error" | "invalid_request_error"
  code: string
  decline_code?: string
  message: string
  doc_url: string
  charge?: string
  payment_method?: { id: string; object: "payment_method"; type: "card" }
}

export type NextAction =
  | { type: "redirect_to_url"; redirect_to_url: { url: string; return_url: string } }
  | { type: "use_stripe_sdk"; use_stripe_sdk: { type: "three_d_secure_redirect"; stripe_js: string; source: string } }

export interface PaymentIntent {
  id: string
  object: "payment_intent"
  amount: number
  amount_capturable: number
  amount_received: number
  automatic_payment_methods: { enabled: boolean; allow_redirects?: string } | null
  canceled_at: number | null
  cancellation_reason: string | null
  capture_method: string
  client_secret: string
  confirmation_method: "automatic"
  created: number
  currency: string
  customer: string | null
  description: string | null
  last_payment_error: LastPaymentError | null
  latest_charge: string | null
  livemode: false
  metadata: Metadata
  next_action: NextAction | null
  payment_method: string | null
  payment_method_types: Array<string>
  receipt_email: string | null
  status: PaymentIntentStatus
}

export interface Charge {
  id: string
  object: "charge"
  amount: number
  amount_captured: number
  amount_refunded: number
  captured: boolean
  created: number
  currency: string
  disputed: boolean
  failure_code: string | null
  failure_message: string | null
  livemode: false
  metadata: Metadata
  outcome: { network_status: string; reason: string | null; seller_message: string; type: string } | null
  paid: boolean
  payment_intent: string
  payment_method: string
  payment_method_details: { type: "card"; card: ChargeCardDetails }
  refunded: boolean
  status: "succeeded" | "pending" | "failed"
}

export interface Refund {
  id: string
  object: "refund"
  amount: number
  charge: string
  created: number
  currency: string
  metadata: Metadata
  payment_intent: string
  reason: string | null
  status: "succeeded"
}

export type DeactivatedReason = "consumed" | "expired" | "resolved" | "revoked"

export interface GrantedToken {
  id: string
  object: "shared_payment.granted_token"
  agent_details: { network_business_profile: string | null } | null
  created: number
  customer: string | null
  deactivated_at: number | null
  deactivated_reason: DeactivatedReason | null
  livemode: false
  payment_method_details: {
    type: "card"
    card: { brand: string; country: string; exp_month: number; exp_year: number; funding: string; last4: string }
  }
  shared_metadata: Metadata
  usage_details: { amount_captured: { value: number; currency: string } }
  usage_limits: { currency: string; expires_at: number | null; max_amount: number }
}

export interface Dispute {
  id: string
  object: "dispute"
  amount: number
  charge: string
  created: number
  currency: string
  livemode: false
  metadata: Metadata
  payment_intent: string
  reason: string
  status: "needs_response" | "under_review" | "won" | "lost"
}

export interface StripeEvent {
  id: string
  object: "event"
  api_version: string
  created: number
  data: { object: unknown }
  livemode: false
  pending_webhooks: number
  request: { id: string | null; idempotency_key: string | null }
  type: string
}

export interface ChargeCardDetails {
  brand: string
  last4: string
  three_d_secure: {
    authentication_flow: null
    electronic_commerce_indicator: string | null
    result: string
    transaction_id: string
    version: string
  } | null
}

/** A deep copy, so a stored snapshot does not move with the live object. */
export const snapshot = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A
