/**
 * Checkout Session API handlers: the request's `API-Version` picks the codec
 * (`wire/acp/versions.ts`) that decodes the body by the common rules into the domain's input
 * and renders the session in that version's format; the service does the rest; failures map to
 * API errors in one place (`error-answers.ts`).
 *
 * Sessions are answered in their wire form, built by the codec from the typed session instead of
 * being encoded by a schema at run time: the response schemas have no transformations, so
 * encoding would only re-validate what the codec built, a full pass over a large nested object
 * per response. The schemas still document the responses (one OpenAPI document per version), and
 * the HTTP tests check every session response against its version's schema strictly.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, ParseResult } from "effect"
import { answeredWith, type RouteAnswer } from "../../idempotency/idempotent-answer.ts"
import { BadRequest, TooManyRequests } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { errorResponse } from "../../platform/http/middleware.ts"
import {
  badRequestFromParseError,
  readJson,
  readOptionalJson,
  unstorableTextError
} from "../../platform/http/request-body.ts"
import { setRetryAfter } from "../../platform/http/retry-after.ts"
import { CurrentClient, RequestedApiVersion } from "../../platform/http/security.ts"
import { RateLimiter } from "../../rate-limit/rate-limiter.ts"
import { CheckoutService, type CompleteError } from "../checkout-service.ts"
import {
  type CancelSessionInput,
  checkoutSessionJson,
  checkoutSessionWithOrderJson,
  type Session
} from "../session/session.ts"
import type { CheckoutCodec, RequestCodec } from "../wire/acp/codec.ts"
import { checkoutCodecs } from "../wire/acp/versions.ts"
import { CheckoutApi } from "./api.ts"
import { mapCheckoutErrors, toApiError } from "./error-answers.ts"

// ---------------------------------------------------------------------------------------------
// Requests and responses

/** The codec of the request's version. */
const requestCodec = Effect.map(RequestedApiVersion, (version) => checkoutCodecs[version])

/**
 * Decodes a parsed JSON body with `codec`: text storage can keep anywhere in it, then the
 * version's schema (first problem, unknown keys ignored), then what the version defines and the
 * merchant cannot honour.
 */
const decodeWith = <Input>(codec: RequestCodec<Input>) => (json: unknown): Either.Either<Input, BadRequest> => {
  const unstorable = unstorableTextError(json)
  if (unstorable !== undefined) return Either.left(unstorable)
  return Either.mapLeft(codec.decode(json), (problem) =>
    ParseResult.isParseError(problem)
      ? badRequestFromParseError(problem)
      : new BadRequest({
        type: "invalid_request",
        code: problem.code,
        message: problem.message,
        param: problem.param
      }))
}

/** Reads the JSON body and decodes it with `codec` (`decodeWith`). */
const decodeBody = <Input>(codec: RequestCodec<Input>) => Effect.flatMap(readJson, decodeWith(codec))

/**
 * The cancel body is optional; one sent is read by the common rules in every version, and decoded
 * only where the version defines it (2025-09-29 defines none: its content is ignored).
 */
const decodeCancelBody = (codec: CheckoutCodec) =>
  Effect.flatMap(
    readOptionalJson,
    (json): Either.Either<CancelSessionInput, BadRequest> =>
      json === undefined || codec.cancel === undefined ? Either.right({}) : decodeWith(codec.cancel)(json)
  )

const json = (body: unknown, status: 200 | 201 = 200) => HttpServerResponse.unsafeJson(body, { status })

/**
 * A session's wire form already serialized: by the store (`CheckoutService.getJson`, GET answers
 * the versions whose session response it is with it, without parsing it) or once for the store
 * and the answer (`checkoutSessionJson`).
 */
const sessionJsonResponse = (text: string, status: 200 | 201 = 200) =>
  HttpServerResponse.text(text, { status, contentType: "application/json" })

/**
 * The answer of a route that writes a session: the session in the request's version; where that is
 * the wire form, its text rendered once (`checkoutSessionJson`: the stored row shares it).
 */
const sessionAnswer = (codec: CheckoutCodec, status: 200 | 201): RouteAnswer<Session> => ({
  success: codec.sessionIsStoredProjection
    ? (session) => sessionJsonResponse(checkoutSessionJson(session), status)
    : (session) => json(codec.session.encode(session), status)
})

/**
 * The answer of complete: the session with its order, or the session waiting for issuer
 * authentication; a declined or rejected payment, and a discount that stopped applying, are
 * answered after the session recorded them. Without an order, as the other writes answer; with
 * one, where the version's session is the wire form, the text the completion's stored row was
 * written with, the order added.
 */
const completedAnswer = (codec: CheckoutCodec): RouteAnswer<Session, CompleteError> => {
  const withoutOrder = sessionAnswer(codec, 200).success
  return {
    success: (session) =>
      session.order === undefined
        ? withoutOrder(session)
        : codec.sessionIsStoredProjection
        ? sessionJsonResponse(checkoutSessionWithOrderJson(session, session.order))
        : json(codec.sessionWithOrder.encode({ ...session, order: session.order })),
    failure: (error) => errorResponse(toApiError(error, codec))
  }
}

// ---------------------------------------------------------------------------------------------
// Handlers

/** Rejected discount codes allowed per API key: this many at once, refilled over a minute (CONTRACT §9). */
export const DISCOUNT_CODE_REJECTIONS_PER_MINUTE = 20
const discountCodeBucket = {
  capacity: DISCOUNT_CODE_REJECTIONS_PER_MINUTE,
  refillPerSecond: DISCOUNT_CODE_REJECTIONS_PER_MINUTE / 60
}

export const CheckoutHandlers = groupHandlers(
  CheckoutApi,
  "checkout",
  Effect.fnUntraced(function*(handlers) {
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
    ): Effect.Effect<Session, E | TooManyRequests, R | HttpServerRequest.HttpServerRequest> =>
      codes === undefined || codes.length === 0 ? change : changeCountingRejections(change)
    const changeCountingRejections = Effect.fnUntraced(function*<E, R>(change: Effect.Effect<Session, E, R>) {
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
      for (const _ of session.discounts?.rejected ?? []) {
        yield* Effect.ignore(limiter.consume(key, discountCodeBucket))
      }
      return session
    })
    const cancel = Effect.fnUntraced(function*(id: string) {
      const codec = yield* requestCodec
      const input = yield* decodeCancelBody(codec)
      return yield* mapCheckoutErrors(
        checkout.cancel(id, input).pipe(answeredWith(sessionAnswer(codec, 200))),
        codec,
        405
      )
    })
    return handlers
      // Pipelines rather than generators on the write routes too: fewer runtime steps per request.
      .handleRaw(
        "create",
        () =>
          Effect.flatMap(
            requestCodec,
            (codec) =>
              Effect.flatMap(decodeBody(codec.create), (input) =>
                limitDiscountCodes(input.discounts?.codes, mapCheckoutErrors(checkout.create(input), codec))
                  .pipe(answeredWith(sessionAnswer(codec, 201))))
          )
      )
      // The hottest route: a plain pipeline (a generator costs measurably more per request here).
      .handle("get", ({ path }) =>
        Effect.flatMap(requestCodec, (codec) =>
          codec.sessionIsStoredProjection
            ? Effect.map(mapCheckoutErrors(checkout.getJson(path.checkout_session_id), codec), sessionJsonResponse)
            : Effect.map(
              mapCheckoutErrors(checkout.get(path.checkout_session_id), codec),
              (session) => json(codec.session.encode(session))
            )))
      .handleRaw(
        "update",
        ({ path }) =>
          Effect.flatMap(
            requestCodec,
            (codec) =>
              Effect.flatMap(decodeBody(codec.update), (input) =>
                limitDiscountCodes(
                  input.discounts?.codes,
                  mapCheckoutErrors(checkout.update(path.checkout_session_id, input), codec)
                ).pipe(answeredWith(sessionAnswer(codec, 200))))
          )
      )
      .handleRaw(
        "complete",
        ({ path }) =>
          Effect.flatMap(
            requestCodec,
            (codec) =>
              Effect.flatMap(decodeBody(codec.complete), (input) =>
                mapCheckoutErrors(
                  checkout.complete(path.checkout_session_id, input).pipe(answeredWith(completedAnswer(codec))),
                  codec
                ))
          )
      )
      .handleRaw("cancel", ({ path }) => cancel(path.checkout_session_id))
  })
)
