/**
 * The PaymentIntents endpoints (API reference, "Payment Intents"): create (confirmed at once with
 * `confirm=true`), confirm, retrieve, capture, cancel and search. A confirm's payment method is a
 * shared payment granted token (`payment_method_data[shared_payment_granted_token]`), one of
 * Stripe's test PaymentMethods (`payment_method`), or the one attached at creation.
 */
import { newId } from "./clock.ts"
import { invalidRequest, resourceMissing } from "./errors.ts"
import { currentToken, recordCapture, release, sourceFromToken } from "./granted-tokens.ts"
import type { PaymentIntent } from "./objects.ts"
import { arrayOf, boolean, hash, integer, metadata, oneOf, optional, required, string, withExpand } from "./params.ts"
import { attempt } from "./payment-attempt.ts"
import { expandIntent } from "./render.ts"
import { TEST_PAYMENT_METHODS } from "./scenarios.ts"
import { parseQuery } from "./search-query.ts"
import type { FakeState, RequestContext, Source } from "./state.ts"
import { paymentMethodOptionsFields, threeDSecureOf } from "./three-d-secure.ts"

const paymentMethodData = hash({
  type: optional(oneOf("card")),
  shared_payment_granted_token: optional(string),
  metadata: optional(metadata)
})

const confirmation = {
  payment_method: optional(string),
  payment_method_data: optional(paymentMethodData),
  return_url: optional(string),
  error_on_requires_action: optional(boolean),
  capture_method: optional(oneOf("automatic", "automatic_async", "manual")),
  payment_method_options: optional(paymentMethodOptionsFields)
}

export const createFields = withExpand({
  ...confirmation,
  amount: required(integer),
  currency: required(string),
  confirm: optional(boolean),
  automatic_payment_methods: optional(hash({
    enabled: required(boolean),
    allow_redirects: optional(oneOf("always", "never"))
  })),
  payment_method_types: optional(arrayOf(string)),
  metadata: optional(metadata),
  description: optional(string),
  customer: optional(string),
  receipt_email: optional(string)
})
export const confirmFields = withExpand(confirmation)
export const cancelFields = withExpand({
  cancellation_reason: optional(oneOf("abandoned", "duplicate", "fraudulent", "requested_by_customer"))
})
export const captureFields = withExpand({ amount_to_capture: optional(integer) })
export const retrieveFields = withExpand({ client_secret: optional(string) })
export const searchFields = withExpand({ query: required(string), limit: optional(integer), page: optional(string) })

type Params = Record<string, any>

// Currencies whose minimum charge is 50 minor units (Currencies, "Minimum and maximum charge amounts").
const FIFTY_MINIMUM = ["usd", "eur", "cad", "aud", "chf", "nzd", "sgd"]

const checkAmount = (amount: number, currency: string): void => {
  if (!/^[a-z]{3}$/.test(currency)) throw invalidRequest(`Invalid currency: ${currency}.`, { param: "currency" })
  if (amount < 1) {
    throw invalidRequest("This value must be greater than or equal to 1.", {
      code: "parameter_invalid_integer",
      param: "amount"
    })
  }
  if (FIFTY_MINIMUM.includes(currency) && amount < 50) {
    throw invalidRequest(`Amount must be at least 50 ${currency} minor units.`, {
      code: "amount_too_small",
      param: "amount"
    })
  }
  if (amount > 99_999_999) {
    throw invalidRequest("Amount must be no more than 99999999 minor units.", {
      code: "amount_too_large",
      param: "amount"
    })
  }
}

const exclusive = (params: Params, a: string, b: string): void => {
  if (params[a] !== undefined && params[b] !== undefined) {
    throw invalidRequest(`You may only specify one of these parameters: ${a}, ${b}.`, { code: "parameters_exclusive" })
  }
}

const unexpectedState = (intent: PaymentIntent, message: string) =>
  invalidRequest(message, { code: "payment_intent_unexpected_state", payment_intent: expandIntent(intent, []) })

/** The payment method named by a create or confirm request, if it names one. */
const namedSource = (state: FakeState, params: Params, intent: PaymentIntent, check: boolean): Source | undefined => {
  exclusive(params, "payment_method", "payment_method_data")
  const data = params.payment_method_data as Params | undefined
  if (data !== undefined) {
    const token = data.shared_payment_granted_token as string | undefined
    if (token === undefined) {
      throw invalidRequest(
        data.type === undefined
          ? "Missing required param: payment_method_data[type]."
          : "Missing required param: payment_method_data[card].",
        {
          code: "parameter_missing",
          param: data.type === undefined ? "payment_method_data[type]" : "payment_method_data[card]"
        }
      )
    }
    if (check) return sourceFromToken(state, token, intent)
    // Without confirm only the token's existence is checked; its limits are checked at confirm.
    if (currentToken(state, token) === undefined) {
      throw invalidRequest(`No such shared_payment.granted_token: '${token}'`, {
        code: "resource_missing",
        param: "payment_method_data[shared_payment_granted_token]"
      })
    }
    return { behavior: state.tokenBehaviors.get(token)!, tokenId: token, last4: "", brand: "" }
  }
  const id = params.payment_method as string | undefined
  if (id === undefined) return undefined
  const method = TEST_PAYMENT_METHODS[id]
  if (method === undefined) {
    throw invalidRequest(`No such PaymentMethod: '${id}'`, { code: "resource_missing", param: "payment_method" })
  }
  return { behavior: method.behavior, tokenId: null, ...method.card }
}

const confirmIntent = (state: FakeState, intent: PaymentIntent, params: Params, request: RequestContext): void => {
  if (!["requires_payment_method", "requires_confirmation", "requires_action"].includes(intent.status)) {
    throw unexpectedState(
      intent,
      `You cannot confirm this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent ` +
        `with one of the following statuses may be confirmed: requires_payment_method, requires_confirmation, requires_action.`
    )
  }
  const threeDSecure = threeDSecureOf(params)
  if (params.capture_method !== undefined) intent.capture_method = params.capture_method
  // Options given now replace those given at creation.
  if (threeDSecure !== undefined) state.threeDSecure.set(intent.id, threeDSecure)
  const attached = state.sources.get(intent.id)
  // A token attached at creation is checked again now: it may have expired or been revoked since.
  const source = namedSource(state, params, intent, true) ??
    (attached?.tokenId ? sourceFromToken(state, attached.tokenId, intent) : attached)
  if (source === undefined) {
    throw unexpectedState(
      intent,
      "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the " +
        "PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method."
    )
  }
  attempt(state, intent, source, {
    returnUrl: params.return_url,
    errorOnRequiresAction: params.error_on_requires_action === true
  }, request)
}

export const createIntent = (state: FakeState, params: Params, request: RequestContext): PaymentIntent => {
  const currency = String(params.currency).toLowerCase()
  checkAmount(params.amount, currency)
  exclusive(params, "automatic_payment_methods", "payment_method_types")
  const threeDSecure = threeDSecureOf(params)
  const id = newId("pi")
  const automatic = params.payment_method_types === undefined
  const intent: PaymentIntent = {
    id,
    object: "payment_intent",
    amount: params.amount,
    amount_capturable: 0,
    amount_received: 0,
    // Since API version 2023-08-16 automatic payment methods are on unless payment_method_types is given.
    automatic_payment_methods: automatic ? (params.automatic_payment_methods ?? { enabled: true }) : null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: params.capture_method ?? "automatic_async",
    client_secret: `${id}_secret_${newId("x").slice(2)}`,
    confirmation_method: "automatic",
    created: state.now(),
    currency,
    customer: params.customer ?? null,
    description: params.description ?? null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: params.metadata ?? {},
    next_action: null,
    payment_method: null,
    payment_method_types: params.payment_method_types ?? ["card"],
    receipt_email: params.receipt_email ?? null,
    status: "requires_payment_method"
  }
  const source = params.confirm === true ? undefined : namedSource(state, params, intent, false)
  state.paymentIntents.set(id, intent)
  if (threeDSecure !== undefined) state.threeDSecure.set(id, threeDSecure)
  if (source !== undefined) {
    state.sources.set(id, source)
    intent.payment_method = newId("pm")
    intent.status = "requires_confirmation"
  }
  state.emit("payment_intent.created", intent, request)
  if (params.confirm === true) confirmIntent(state, intent, params, request)
  return intent
}

export const findIntent = (state: FakeState, id: string): PaymentIntent => {
  const intent = state.paymentIntents.get(id)
  if (intent === undefined) throw resourceMissing("payment_intent", id, "intent")
  return intent
}

export const confirmExisting = (state: FakeState, id: string, params: Params, request: RequestContext) => {
  const intent = findIntent(state, id)
  confirmIntent(state, intent, params, request)
  return intent
}

export const captureIntent = (state: FakeState, id: string, params: Params, request: RequestContext) => {
  const intent = findIntent(state, id)
  if (intent.status !== "requires_capture") {
    throw unexpectedState(
      intent,
      `This PaymentIntent could not be captured because it has a status of ${intent.status}. Only a PaymentIntent ` +
        `with one of the following statuses may be captured: requires_capture.`
    )
  }
  const amount: number = params.amount_to_capture ?? intent.amount_capturable
  if (amount > intent.amount_capturable) {
    throw invalidRequest("The amount to capture is greater than the amount capturable.", {
      code: "amount_too_large",
      param: "amount_to_capture"
    })
  }
  const charge = state.charges.get(intent.latest_charge!)!
  charge.captured = true
  charge.amount_captured = amount
  intent.status = "succeeded"
  intent.amount_received = amount
  intent.amount_capturable = 0
  release(state, id)
  const tokenId = state.sources.get(id)?.tokenId
  if (tokenId) recordCapture(state, tokenId, amount)
  state.emit("charge.captured", charge, request)
  state.emit("payment_intent.succeeded", intent, request)
  return intent
}

const CANCELABLE = ["requires_payment_method", "requires_capture", "requires_confirmation", "requires_action"]

// The reference allows canceling `processing` "in rare cases" (not for cards): the fake refuses it.
export const cancelIntent = (state: FakeState, id: string, params: Params, request: RequestContext) => {
  const intent = findIntent(state, id)
  if (!CANCELABLE.includes(intent.status)) {
    throw unexpectedState(
      intent,
      `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with ` +
        `one of the following statuses may be canceled: ${CANCELABLE.join(", ")}, processing.`
    )
  }
  if (intent.status === "requires_capture" && intent.latest_charge !== null) {
    // The uncaptured amount goes back to the customer.
    const charge = state.charges.get(intent.latest_charge)!
    charge.amount_refunded = charge.amount
    charge.refunded = true
  }
  intent.status = "canceled"
  intent.canceled_at = state.now()
  intent.cancellation_reason = params.cancellation_reason ?? null
  intent.next_action = null
  intent.amount_capturable = 0
  release(state, id)
  state.emit("payment_intent.canceled", intent, request)
  return intent
}

/** Search, newest first; `page` is the fake's cursor (an offset), as opaque to clients as Stripe's. */
export const searchIntents = (state: FakeState, params: Params, expand: ReadonlyArray<string>) => {
  const matches = parseQuery(params.query)
  const limit: number = params.limit ?? 10
  if (limit < 1 || limit > 100) throw invalidRequest("limit must be between 1 and 100.", { param: "limit" })
  const offset = params.page === undefined ? 0 : Number(params.page)
  const found = [...state.paymentIntents.values()].reverse().filter((intent) =>
    matches((field, key) => field === "metadata" ? intent.metadata[key!] : (intent as any)[field])
  )
  const page = found.slice(offset, offset + limit)
  const hasMore = offset + limit < found.length
  const itemExpand = expand.filter((path) => path.startsWith("data.")).map((path) => path.slice(5))
  return {
    object: "search_result",
    data: page.map((intent) => expandIntent(intent, itemExpand, state)),
    has_more: hasMore,
    next_page: hasMore ? String(offset + limit) : null,
    url: "/v1/payment_intents/search"
  }
}
