/**
 * Checkout Session API handlers: decode the body by the common rules with the schema the endpoint
 * declares, call the service, map its failures. Sessions are answered in their wire form
 * (`./session-response.ts`). A bad `payment_data` is reported in the shape its keys name
 * (`src/shared/schema-failure.ts`).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CheckoutService } from "./checkout-service.ts"
import { CheckoutApi, CheckoutGroup } from "./checkout-api.ts"
import { mapCheckoutErrors } from "./error-mapping.ts"
import { TooManyRequests } from "../platform/http/errors.ts"
import { RateLimiter } from "../rate-limit/rate-limiter-service.ts"
import type { Session } from "./session-model.ts"
import { setRetryAfter } from "../platform/http/retry-after.ts"
import { CurrentClient } from "../platform/http/security.ts"
import { decodeDeclaredBody } from "../platform/http/request-body.ts"
import { completedSessionResponse, sessionJsonResponse, sessionResponse } from "./session-response.ts"

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
        decodeDeclaredBody(CheckoutGroup, "create").pipe(
          Effect.flatMap((body) => limitDiscountCodes(body.discounts?.codes, mapCheckoutErrors(checkout.create(body)))),
          Effect.map((session) => sessionResponse(session, 201))
        ))
      .handle("get", ({ path }) =>
        Effect.map(mapCheckoutErrors(checkout.getJson(path.checkout_session_id)), sessionJsonResponse))
      .handleRaw("update", ({ path }) =>
        decodeDeclaredBody(CheckoutGroup, "update").pipe(
          Effect.flatMap((body) =>
            limitDiscountCodes(body.discounts?.codes, mapCheckoutErrors(checkout.update(path.checkout_session_id, body)))
          ),
          Effect.map(sessionResponse)
        ))
      .handleRaw("complete", ({ path }) =>
        decodeDeclaredBody(CheckoutGroup, "complete").pipe(
          Effect.flatMap((body) => mapCheckoutErrors(checkout.complete(path.checkout_session_id, body))),
          Effect.map(completedSessionResponse)
        ))
      .handle("cancel", ({ path }) =>
        Effect.map(mapCheckoutErrors(checkout.cancel(path.checkout_session_id), 405), sessionResponse))
  }))
