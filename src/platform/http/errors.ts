/** The API's errors, one class per status; on the wire `{type, code, message, param?}` (the interface document). */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import { JsonPath, optional } from "../../shared/schema-helpers.ts"

export const ErrorType = Schema.Literal(
  "invalid_request",
  "request_not_idempotent",
  "processing_error",
  "service_unavailable"
)
export type ErrorType = typeof ErrorType.Type

const common = {
  type: ErrorType,
  message: Schema.String,
  param: optional(JsonPath)
}

export const BadRequestCode = Schema.Literal(
  "missing",
  "invalid",
  /** A field the request's version defines that this merchant does not offer (split fulfillment, quotes…). */
  "unsupported",
  "missing_api_version",
  "unsupported_api_version",
  "invalid_content_type",
  "invalid_json",
  /** Complete of a session waiting for issuer authentication without its result. */
  "requires_3ds",
  /** `POST /stripe/webhooks`: no Stripe-Signature, none matching, or signed too long ago. */
  "invalid_signature"
)
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  ...common,
  code: BadRequestCode,
  /** Present on API-Version errors: the accepted versions, newest first. */
  supported_versions: optional(Schema.Array(Schema.String))
}) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  ...common,
  code: Schema.Literal("unauthorized", "invalid_signature")
}) {}

/** A known API key of the other kind: an agent key on a merchant route, or a merchant key on an agent route. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  ...common,
  code: Schema.Literal("forbidden")
}) {}

export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()("PaymentRequired", {
  ...common,
  code: Schema.Literal("payment_declined")
}) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  ...common,
  code: Schema.Literal("not_found")
}) {}

export const FinalStatusCode = Schema.Literal("session_completed", "session_canceled", "session_expired")

export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  ...common,
  code: Schema.Union(FinalStatusCode, Schema.Literal("method_not_allowed"))
}) {}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  ...common,
  code: Schema.Union(
    FinalStatusCode,
    Schema.Literal("idempotency_conflict", "idempotency_in_flight"),
    /** Complete with a fulfillment address other than the session's: update the session first. */
    Schema.Literal("fulfillment_address_changed"),
    /** Order routes: the order's status does not allow the change; a redrive of a delivery that is not dead. */
    Schema.Literal("invalid_order_transition", "refund_not_allowed", "delivery_not_dead"),
    /** Order refunds: another refund of the order was being made at once; the payment is disputed. */
    Schema.Literal("refund_conflict", "payment_disputed"),
    /** Products: the product id is taken; a variant id is another product's; not the `expected_stock` on hand. */
    Schema.Literal("product_exists", "variant_id_taken", "stock_changed")
  )
}) {}

/** A write whose `If-Match` names a version the resource no longer has. */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", {
  ...common,
  code: Schema.Literal("precondition_failed")
}) {}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  ...common,
  code: Schema.Literal("request_too_large")
}) {}

export class Unprocessable extends Schema.TaggedError<Unprocessable>()("Unprocessable", {
  ...common,
  code: Schema.Union(
    Schema.Literal("out_of_stock", "session_not_modifiable", "session_not_ready", "payment_declined", "invalid"),
    /** Order refunds: the sum of refunds would exceed the order total. */
    Schema.Literal("refund_exceeds_total"),
    /** Order refunds: the payment provider refused the refund (its reason in the message). */
    Schema.Literal("refund_refused"),
    /** Products: a stock level below the units checkouts hold. */
    Schema.Literal("stock_below_reserved"),
    /** Complete: a price changed since the session was priced (it is re-priced: review, complete again). */
    Schema.Literal("price_changed"),
    /** Complete: an item is archived or out of stock at the merchant's word. */
    Schema.Literal("product_unavailable"),
    /** Complete: a discount applied on the session no longer applies (the reason of its rejection). */
    Schema.Literal(
      "discount_code_invalid",
      "discount_code_expired",
      "discount_code_usage_limit_reached",
      "discount_code_minimum_not_met",
      "discount_code_already_applied"
    )
  )
}) {}

export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  ...common,
  code: Schema.Literal("too_many_requests")
}) {}

export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  ...common,
  code: Schema.Literal("processing_error")
}) {}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  ...common,
  code: Schema.Literal("service_unavailable")
}) {}

export type ApiError =
  | BadRequest
  | Unauthorized
  | PaymentRequired
  | Forbidden
  | NotFound
  | MethodNotAllowed
  | Conflict
  | PreconditionFailed
  | PayloadTooLarge
  | Unprocessable
  | TooManyRequests
  | InternalError
  | ServiceUnavailable

/** An error class without `_tag`, at its HTTP status; decoding adds the tag back (for `HttpApiClient`). */
export const wire = <Self extends { readonly _tag: string }, Fields extends Schema.Struct.Fields>(
  cls: Schema.Schema<Self, any, never> & { readonly fields: Fields; readonly _tag: Self["_tag"] },
  status: number
) => {
  const { _tag: _, ...fields } = cls.fields as Fields & { _tag: unknown }
  return Schema.transform(Schema.Struct(fields), cls, {
    strict: false,
    decode: (body) => ({ ...body, _tag: cls._tag }),
    encode: ({ _tag: _t, ...body }) => body
  }).annotations(HttpApiSchema.annotations({ status, identifier: `${cls._tag}Error` }))
}

export const BadRequestWire = wire(BadRequest, 400)
export const UnauthorizedWire = wire(Unauthorized, 401)
export const PaymentRequiredWire = wire(PaymentRequired, 402)
export const ForbiddenWire = wire(Forbidden, 403)
export const NotFoundWire = wire(NotFound, 404)
export const MethodNotAllowedWire = wire(MethodNotAllowed, 405)
export const ConflictWire = wire(Conflict, 409)
export const PreconditionFailedWire = wire(PreconditionFailed, 412)
export const PayloadTooLargeWire = wire(PayloadTooLarge, 413)
export const UnprocessableWire = wire(Unprocessable, 422)
export const TooManyRequestsWire = wire(TooManyRequests, 429)
export const InternalErrorWire = wire(InternalError, 500)
export const ServiceUnavailableWire = wire(ServiceUnavailable, 503)

export const statusOf: Record<ApiError["_tag"], number> = {
  BadRequest: 400,
  Unauthorized: 401,
  PaymentRequired: 402,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  Unprocessable: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503
}

export const errorBody = (error: ApiError): Record<string, unknown> => {
  const { _tag: _, ...rest } = { ...error } as ApiError & Record<string, unknown>
  const body: Record<string, unknown> = { type: error.type, code: error.code, message: error.message }
  if (error.param !== undefined) body.param = error.param
  if ("supported_versions" in rest && rest.supported_versions !== undefined) {
    body.supported_versions = rest.supported_versions
  }
  return body
}

export const internalError = () =>
  new InternalError({ type: "processing_error", code: "processing_error", message: "An unexpected error occurred." })

export const serviceUnavailable = () =>
  new ServiceUnavailable({
    type: "service_unavailable",
    code: "service_unavailable",
    message: "The service is temporarily unavailable; retry shortly."
  })
