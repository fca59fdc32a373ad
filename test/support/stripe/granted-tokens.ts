/**
 * SharedPaymentGrantedTokens (API reference, "Shared Payment Granted Token"): retrieve
 * (`GET /v1/shared_payment/granted_tokens/:id`) and the test helpers that create one for a test
 * PaymentMethod with `usage_limits` (`currency`, `max_amount`, optional `expires_at`) and revoke it.
 * A token is deactivated with `deactivated_reason` `revoked`, `expired` (its `expires_at` passed) or
 * `consumed` (captures reached `max_amount`); `usage_details.amount_captured` sums its captures.
 */
import { newId } from "./clock.ts"
import { invalidRequest, resourceMissing } from "./errors.ts"
import type { GrantedToken, PaymentIntent } from "./objects.ts"
import { hash, integer, metadata, optional, required, string, withExpand } from "./params.ts"
import { type Behavior, TEST_PAYMENT_METHODS } from "./scenarios.ts"
import type { FakeState, Source } from "./state.ts"

export const createTokenFields = withExpand({
  payment_method: required(string),
  usage_limits: required(hash({
    currency: required(string),
    max_amount: required(integer),
    expires_at: optional(integer)
  })),
  customer: optional(string),
  shared_metadata: optional(metadata)
})

export interface TokenParams {
  readonly payment_method: string
  readonly usage_limits: { readonly currency: string; readonly max_amount: number; readonly expires_at?: number }
  readonly customer?: string
  readonly shared_metadata?: Record<string, string>
}

/** Creates a token for a test PaymentMethod; `behavior` overrides the one the method stands for. */
export const createToken = (state: FakeState, params: TokenParams, behavior?: Behavior): GrantedToken => {
  const method = TEST_PAYMENT_METHODS[params.payment_method]
  if (method === undefined) {
    throw invalidRequest(`No such PaymentMethod: '${params.payment_method}'`, {
      code: "resource_missing",
      param: "payment_method"
    })
  }
  if (params.usage_limits.max_amount <= 0) {
    throw invalidRequest("Invalid positive integer", {
      code: "parameter_invalid_integer",
      param: "usage_limits[max_amount]"
    })
  }
  const currency = params.usage_limits.currency.toLowerCase()
  const token: GrantedToken = {
    id: newId("spt"),
    object: "shared_payment.granted_token",
    agent_details: { network_business_profile: "profile_test_fake" },
    created: state.now(),
    customer: params.customer ?? null,
    deactivated_at: null,
    deactivated_reason: null,
    livemode: false,
    payment_method_details: {
      type: "card",
      card: {
        brand: method.card.brand,
        country: "US",
        exp_month: 12,
        exp_year: 2034,
        funding: "credit",
        last4: method.card.last4
      }
    },
    shared_metadata: params.shared_metadata ?? {},
    usage_details: { amount_captured: { value: 0, currency } },
    usage_limits: {
      currency,
      expires_at: params.usage_limits.expires_at ?? null,
      max_amount: params.usage_limits.max_amount
    }
  }
  state.tokens.set(token.id, token)
  state.tokenBehaviors.set(token.id, behavior ?? method.behavior)
  return token
}

/** The token as of now: one past its `expires_at` is deactivated as `expired` when read. */
export const currentToken = (state: FakeState, id: string): GrantedToken | undefined => {
  const token = state.tokens.get(id)
  const expiresAt = token?.usage_limits.expires_at ?? null
  if (token !== undefined && token.deactivated_reason === null && expiresAt !== null && expiresAt <= state.now()) {
    token.deactivated_reason = "expired"
    token.deactivated_at = expiresAt
  }
  return token
}

export const retrieveToken = (state: FakeState, id: string): GrantedToken => {
  const token = currentToken(state, id)
  if (token === undefined) throw resourceMissing("shared_payment.granted_token", id)
  return token
}

// Assumption: the reference does not say what revoking a deactivated token does; it is left as it was.
export const revokeToken = (state: FakeState, id: string): GrantedToken => {
  const token = retrieveToken(state, id)
  if (token.deactivated_reason === null) {
    token.deactivated_reason = "revoked"
    token.deactivated_at = state.now()
  }
  return token
}

const TOKEN_PARAM = "payment_method_data[shared_payment_granted_token]"

/**
 * The payment method a PaymentIntent gets from a token, or the error confirming with it answers.
 * Assumption: the reference names no error codes for an unusable token; the fake answers 400
 * `invalid_request_error` with Stripe's general codes — `payment_method_unexpected_state` for a
 * deactivated token, `payment_intent_invalid_parameter` for another currency, `amount_too_large`
 * past what is left of `max_amount` (captures and amounts still processing both count).
 */
export const sourceFromToken = (state: FakeState, id: string, intent: PaymentIntent): Source => {
  const token = currentToken(state, id)
  const context = { payment_intent: intent }
  if (token === undefined) {
    throw invalidRequest(`No such shared_payment.granted_token: '${id}'`, {
      code: "resource_missing",
      param: TOKEN_PARAM,
      ...context
    })
  }
  if (token.deactivated_reason !== null) {
    throw invalidRequest(
      `This SharedPaymentGrantedToken can no longer be used: it was deactivated (${token.deactivated_reason}).`,
      { code: "payment_method_unexpected_state", param: TOKEN_PARAM, ...context }
    )
  }
  if (token.usage_limits.currency !== intent.currency) {
    throw invalidRequest(
      `The currency of this PaymentIntent (${intent.currency}) does not match the SharedPaymentGrantedToken's ` +
        `usage limit currency (${token.usage_limits.currency}).`,
      { code: "payment_intent_invalid_parameter", param: "currency", ...context }
    )
  }
  const left = token.usage_limits.max_amount - token.usage_details.amount_captured.value - heldOn(state, id)
  if (intent.amount > left) {
    throw invalidRequest(
      `The amount ${intent.amount} exceeds what this SharedPaymentGrantedToken still allows (${left}).`,
      { code: "amount_too_large", param: "amount", ...context }
    )
  }
  const card = token.payment_method_details.card
  return { behavior: state.tokenBehaviors.get(id)!, tokenId: id, last4: card.last4, brand: card.brand }
}

/** A capture on the token; reaching `max_amount` deactivates it as `consumed`. */
export const recordCapture = (state: FakeState, id: string, amount: number): void => {
  const token = state.tokens.get(id)
  if (token === undefined) return
  token.usage_details.amount_captured.value += amount
  if (token.usage_details.amount_captured.value >= token.usage_limits.max_amount && token.deactivated_reason === null) {
    token.deactivated_reason = "consumed"
    token.deactivated_at = state.now()
  }
}

const heldOn = (state: FakeState, tokenId: string): number => {
  let held = 0
  for (const entry of state.holds.values()) if (entry.tokenId === tokenId) held += entry.amount
  return held
}

/** Holds `amount` of the PaymentIntent's token until `release` (processing, or awaiting capture). */
export const hold = (state: FakeState, intentId: string, amount: number): void => {
  const tokenId = state.sources.get(intentId)?.tokenId ?? null
  if (tokenId !== null) state.holds.set(intentId, { tokenId, amount })
}

export const release = (state: FakeState, intentId: string): void => {
  state.holds.delete(intentId)
}
