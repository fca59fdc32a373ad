/**
 * Stripe's error shape (API reference, "Errors"): `{ error: { type, code, decline_code, message,
 * param, doc_url, payment_intent, … } }` with the HTTP status telling the class — 400 invalid
 * request, 401 no valid key, 402 request failed (card errors), 404 missing, 409 conflict, 429 too
 * many requests, 5xx Stripe's side. Handlers throw `StripeApiError`; the server writes it.
 */

export type ErrorType = "api_error" | "card_error" | "idempotency_error" | "invalid_request_error"

export interface ErrorBody {
  readonly type: ErrorType
  readonly message: string
  readonly code?: string
  readonly decline_code?: string
  readonly param?: string
  readonly doc_url?: string
  readonly charge?: string
  readonly payment_intent?: unknown
  readonly payment_method?: unknown
  readonly request_log_url?: string
}

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Readonly<Record<string, string>> = {}
  ) {
    super(body.message)
  }
}

/** Stripe links each error code to its page under /error-codes, with dashes for underscores. */
export const docUrl = (code: string): string => `https://docs.stripe.com/error-codes/${code.replaceAll("_", "-")}`

interface Details {
  readonly code?: string
  readonly param?: string
  readonly payment_intent?: unknown
}

export const invalidRequest = (message: string, details: Details = {}, status = 400): StripeApiError =>
  new StripeApiError(status, {
    type: "invalid_request_error",
    message,
    ...details,
    ...(details.code === undefined ? {} : { doc_url: docUrl(details.code) })
  })

export const parameterUnknown = (param: string): StripeApiError =>
  invalidRequest(`Received unknown parameter: ${param}`, { code: "parameter_unknown", param })

export const parameterMissing = (param: string): StripeApiError =>
  invalidRequest(`Missing required param: ${param}.`, { code: "parameter_missing", param })

export const resourceMissing = (kind: string, id: string, param = "id"): StripeApiError =>
  invalidRequest(`No such ${kind}: '${id}'`, { code: "resource_missing", param }, 404)

export const apiError = (message: string): StripeApiError => new StripeApiError(500, { type: "api_error", message })
