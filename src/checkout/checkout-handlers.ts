/**
 * Checkout Session API handlers: decode the body by the common rules, call the service, map its
 * failures. Sessions are answered in their wire form (`./session-response.ts`).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, type ParseResult, Schema } from "effect"
import {
  Buyer,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  HandlerPaymentData,
  LegacyPaymentData,
  type PaymentData
} from "./checkout-schemas.ts"
import { firstFailureAtJsonPath } from "../shared/schema-failure.ts"
import { optional } from "../shared/schema-helpers.ts"
import { CheckoutService } from "./checkout-service.ts"
import { CheckoutApi } from "./checkout-api.ts"
import { mapCheckoutErrors } from "./error-mapping.ts"
import { BadRequest, TooManyRequests } from "../platform/http/errors.ts"
import { RateLimiter } from "../rate-limit/rate-limit.ts"
import type { Session } from "./session-model.ts"
import { setRetryAfter } from "../delegate/delegate-handlers.ts"
import { CurrentClient } from "../platform/http/security.ts"
import { decodeJson, decodeJsonBody, parseJson, readJsonText } from "../platform/http/request-body.ts"
import { completedSessionResponse, sessionJsonResponse, sessionResponse } from "./session-response.ts"

const CompleteEnvelope = Schema.Struct({
  buyer: optional(Buyer),
  payment_data: Schema.Object.annotations({ identifier: "object" })
})

type DecodePaymentData = (value: unknown) => Effect.Effect<PaymentData, ParseResult.ParseError>
const decodeHandler: DecodePaymentData = Schema.decodeUnknown(HandlerPaymentData, { errors: "first" })
const decodeLegacy: DecodePaymentData = Schema.decodeUnknown(LegacyPaymentData, { errors: "first" })

/**
 * `payment_data` comes in two shapes; the keys present choose the shape, so the error names the
 * field of the shape the client meant (CONTRACT §7).
 */
const decodePaymentData = (value: object): Effect.Effect<PaymentData, BadRequest> => {
  const shape = "handler_id" in value || "instrument" in value
    ? decodeHandler
    : "token" in value || "provider" in value
    ? decodeLegacy
    : undefined
  if (shape === undefined) {
    return Effect.fail(
      new BadRequest({
        type: "invalid_request",
        code: "missing",
        message: "$.payment_data must have handler_id and instrument, or token and provider.",
        param: "$.payment_data.handler_id"
      })
    )
  }
  return Effect.mapError(shape(value), (error) => {
    const first = firstFailureAtJsonPath(error, "$.payment_data")
    return new BadRequest({ type: "invalid_request", code: first.kind, message: first.message, param: first.param })
  })
}

const decodeCompleteBody = readJsonText.pipe(
  Effect.flatMap(parseJson),
  Effect.flatMap(decodeJson(CompleteEnvelope)),
  Effect.flatMap((body) =>
    Effect.map(decodePaymentData(body.payment_data), (payment_data) => ({
      ...(body.buyer ? { buyer: body.buyer } : {}),
      payment_data
    }))
  )
)

/** Rejected discount codes allowed per API key: this many at once, refilled over a minute (CONTRACT §9). */
export const DISCOUNT_CODE_REJECTIONS_PER_MINUTE = 20
const discountCodeBucket = {
  capacity: DISCOUNT_CODE_REJECTIONS_PER_MINUTE,
  refillPerSecond: DISCOUNT_CODE_REJECTIONS_PER_MINUTE / 60
}

export const CheckoutHandlers = HttpApiBuilder.group(CheckoutApi, "checkout", (handlers) =>
  Effect.gen(function*() {
    const checkout = yield* CheckoutService
    const limiter = yield* RateLimiter

    /**
     * Code guessing (CONTRACT §9): a request carrying codes is refused with 429 (and Retry-After,
     * nothing applied) while the API key's bucket of rejected codes is empty; after the change,
     * each code it got rejected takes one token.
     */
    const limitDiscountCodes = <E, R>(
      codes: ReadonlyArray<string> | undefined,
      change: Effect.Effect<Session, E, R>
    ): Effect.Effect<Session, E | TooManyRequests, R | CurrentClient> =>
      codes === undefined || codes.length === 0 ? change : Effect.gen(function*() {
        const key = `discount_codes:${(yield* CurrentClient).keyId}`
        yield* limiter.peek(key, discountCodeBucket).pipe(
          Effect.catchTag("RateLimited", (limited) =>
            Effect.zipRight(
              setRetryAfter(limited.retryAfterSeconds),
              Effect.fail(
                new TooManyRequests({
                  type: "invalid_request",
                  code: "too_many_requests",
                  message: `Too many rejected discount codes; retry after ${limited.retryAfterSeconds} s.`,
                  param: "$.discounts.codes"
                })
              )
            ))
        )
        const session = yield* change
        for (const _ of session.discounts?.rejected ?? []) yield* Effect.ignore(limiter.consume(key, discountCodeBucket))
        return session
      })
    return handlers
      .handleRaw("create", () =>
        decodeJsonBody(CheckoutSessionCreateRequest).pipe(
          Effect.flatMap((body) => limitDiscountCodes(body.discounts?.codes, mapCheckoutErrors(checkout.create(body)))),
          Effect.map((session) => sessionResponse(session, 201))
        ))
      .handle("get", ({ path }) =>
        Effect.map(mapCheckoutErrors(checkout.getJson(path.checkout_session_id)), sessionJsonResponse))
      .handleRaw("update", ({ path }) =>
        decodeJsonBody(CheckoutSessionUpdateRequest).pipe(
          Effect.flatMap((body) =>
            limitDiscountCodes(body.discounts?.codes, mapCheckoutErrors(checkout.update(path.checkout_session_id, body)))
          ),
          Effect.map(sessionResponse)
        ))
      .handleRaw("complete", ({ path }) =>
        decodeCompleteBody.pipe(
          Effect.flatMap((body) => mapCheckoutErrors(checkout.complete(path.checkout_session_id, body))),
          Effect.map(completedSessionResponse)
        ))
      .handle("cancel", ({ path }) =>
        Effect.map(mapCheckoutErrors(checkout.cancel(path.checkout_session_id), 405), sessionResponse))
  }))
