/**
 * Sessions are answered as the codec builds them, not encoded by a schema: the response schemas
 * have no transformations, so encoding would only re-validate a large object per response.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, ParseResult } from "effect"
import { answeredWith, type RouteAnswer } from "../../idempotency/idempotent-answer.ts"
import { BadRequest, NotFound, TooManyRequests } from "../../platform/http/errors.ts"
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
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { CheckoutService, type CompleteError } from "../checkout-service.ts"
import {
  type CancelSessionInput,
  checkoutSessionJson,
  checkoutSessionWithOrderJson,
  type Session,
  sessionProtocol
} from "../session/session.ts"
import type { CheckoutCodec, RequestCodec } from "../wire/acp/codec.ts"
import { checkoutCodecs } from "../wire/acp/versions.ts"
import { CheckoutApi } from "./api.ts"
import { mapCheckoutErrors, toApiError } from "./error-answers.ts"

const requestCodec = Effect.map(RequestedApiVersion, (version) => checkoutCodecs[version])

/** A session created over UCP is driven there only: here it is not found, and the answer says where it is. */
const acpSession = (id: string): Effect.Effect<void, NotFound> =>
  sessionProtocol(id) === "acp" ? Effect.void : Effect.fail(
    new NotFound({
      type: "invalid_request",
      code: "not_found",
      message: `No ACP checkout session ${
        maskCardNumbers(id)
      }; a session created over UCP is read and changed at /ucp/checkout-sessions/{id}.`,
      param: "$.checkout_session_id"
    })
  )

/** Refuses text storage cannot keep, then what the version's schema refuses, then what the merchant cannot honour. */
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

const decodeBody = <Input>(codec: RequestCodec<Input>) => Effect.flatMap(readJson, decodeWith(codec))

/** The cancel body is optional, read by the common rules, and decoded only where the version defines it. */
const decodeCancelBody = (codec: CheckoutCodec) =>
  Effect.flatMap(
    readOptionalJson,
    (json): Either.Either<CancelSessionInput, BadRequest> =>
      json === undefined || codec.cancel === undefined ? Either.right({}) : decodeWith(codec.cancel)(json)
  )

const json = (body: unknown, status: 200 | 201 = 200) => HttpServerResponse.unsafeJson(body, { status })

/** A wire form already serialized: by the store (`getJson`), or once for the store and the answer. */
const sessionJsonResponse = (text: string, status: 200 | 201 = 200) =>
  HttpServerResponse.text(text, { status, contentType: "application/json" })

const sessionAnswer = (codec: CheckoutCodec, status: 200 | 201): RouteAnswer<Session> => ({
  success: codec.sessionIsStoredProjection
    ? (session) => sessionJsonResponse(checkoutSessionJson(session), status)
    : (session) => json(codec.session.encode(session), status)
})

/** A failed payment or a discount that stopped applying is answered after the session recorded it. */
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

    /** Code guessing (CONTRACT §9): 429 while the key's bucket is empty; each code rejected takes a token. */
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
      yield* acpSession(id)
      const codec = yield* requestCodec
      const input = yield* decodeCancelBody(codec)
      return yield* mapCheckoutErrors(
        checkout.cancel(id, input).pipe(answeredWith(sessionAnswer(codec, 200))),
        codec,
        405
      )
    })
    return handlers
      // Pipelines rather than generators: fewer runtime steps per request.
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
      .handle(
        "get",
        ({ path }) =>
          Effect.flatMap(
            Effect.zipRight(acpSession(path.checkout_session_id), requestCodec),
            (codec) =>
              codec.sessionIsStoredProjection
                ? Effect.map(mapCheckoutErrors(checkout.getJson(path.checkout_session_id), codec), sessionJsonResponse)
                : Effect.map(
                  mapCheckoutErrors(checkout.get(path.checkout_session_id), codec),
                  (session) => json(codec.session.encode(session))
                )
          )
      )
      .handleRaw(
        "update",
        ({ path }) =>
          Effect.flatMap(
            Effect.zipRight(acpSession(path.checkout_session_id), requestCodec),
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
            Effect.zipRight(acpSession(path.checkout_session_id), requestCodec),
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
