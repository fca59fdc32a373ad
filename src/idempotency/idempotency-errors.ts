/**
 * The error objects of idempotency failures (CONTRACT §6), one flavour per error family: a route
 * answers in the family its group declares (`ErrorFamily`, `src/platform/http/route-declarations.ts`).
 */

/** The `param` of an error about the `Idempotency-Key` header. */
export const IDEMPOTENCY_KEY_PARAM = "$.headers['Idempotency-Key']"

export type IdempotencyFailure = "invalid_key" | "conflict" | "in_flight"

/** The error object of an idempotency failure, in the wire shape of the route family. */
export interface IdempotencyErrorBody {
  readonly type: "invalid_request" | "request_not_idempotent"
  readonly code: "invalid" | "invalid_card" | "idempotency_conflict" | "idempotency_in_flight"
  readonly message: string
  readonly param?: string
}

export type IdempotencyErrorFlavour = (failure: IdempotencyFailure) => IdempotencyErrorBody

const messages: Record<IdempotencyFailure, string> = {
  invalid_key: "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.",
  conflict: "This Idempotency-Key was already used with a different request body.",
  in_flight: "A request with this Idempotency-Key is still being processed; retry shortly."
}

/** Checkout and order routes: the checkout error object (CONTRACT §3). */
export const checkoutIdempotencyErrors: IdempotencyErrorFlavour = (failure) =>
  failure === "invalid_key"
    ? { type: "invalid_request", code: "invalid", message: messages[failure], param: IDEMPOTENCY_KEY_PARAM }
    : {
      type: "request_not_idempotent",
      code: failure === "conflict" ? "idempotency_conflict" : "idempotency_in_flight",
      message: messages[failure]
    }

/**
 * The delegate payment route: its closed set of type/code (interface document), where validation
 * failures are `invalid_card` with a `param` and idempotency problems are `invalid_request`.
 */
export const delegateIdempotencyErrors: IdempotencyErrorFlavour = (failure) =>
  failure === "invalid_key"
    ? { type: "invalid_request", code: "invalid_card", message: messages[failure], param: IDEMPOTENCY_KEY_PARAM }
    : {
      type: "invalid_request",
      code: failure === "conflict" ? "idempotency_conflict" : "idempotency_in_flight",
      message: messages[failure]
    }
