/** Delegate Authentication API handlers and middlewares; a POST's answer is committed with its effect. */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Layer, Schema } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { answeredWith, type RouteAnswer } from "../../idempotency/idempotent-answer.ts"
import { AppConfig } from "../../platform/config.ts"
import { BadRequest, NotFound } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { decodeDeclaredBody, mediaTypeOf } from "../../platform/http/request-body.ts"
import { SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, setRetryAfter } from "../../platform/http/retry-after.ts"
import { CurrentClient, forbiddenMessage, makeBearerCheck, RequestedApiVersion } from "../../platform/http/security.ts"
import { RateLimiter } from "../../rate-limit/rate-limiter.ts"
import { luhnValid, maskCardNumbers, MISPLACED_CARD_NUMBER } from "../../shared/card-numbers.ts"
import { cardNumberPath } from "../../shared/json-text.ts"
import { type AuthenticationStepError, IssuerAuthentication } from "../authentication-service.ts"
import type { AuthenticationSession } from "../model/authentication-session.ts"
import { THREE_DS_VERSION } from "../model/authentication-session.ts"
import { AuthenticationSessionWire, AuthenticationSessionWithResultWire } from "../wire/acp/v2026-04-17.ts"
import {
  AcsFormBody,
  AuthnBadRequest,
  AuthnBearer,
  AuthnConflict,
  AuthnForbidden,
  AuthnInternalError,
  AuthnNotFound,
  AuthnRateLimited,
  AuthnRoleEnabled,
  AuthnServiceUnavailable,
  AuthnUnauthorized,
  DELEGATE_AUTHENTICATION_VERSION,
  DelegateAuthenticationApi,
  DelegateAuthenticationGroup
} from "./api.ts"

/** `withResult`: as GET shows it. */
export const sessionWire = (session: AuthenticationSession, baseUrl: string, withResult: boolean) => {
  const base = `${baseUrl}/delegate_authentication/${encodeURIComponent(session.id)}/acs`
  const action = session.status !== "action_required"
    ? undefined
    : session.action === "fingerprint"
    ? {
      type: "fingerprint" as const,
      fingerprint: { three_ds_method_url: `${base}/method`, three_ds_server_trans_id: session.threeDsServerTransId }
    }
    : {
      type: "challenge" as const,
      challenge: {
        acs_url: `${base}/challenge`,
        acs_trans_id: session.acsTransId,
        three_ds_server_trans_id: session.threeDsServerTransId,
        message_version: THREE_DS_VERSION
      }
    }
  const result = withResult && session.result !== undefined
    ? {
      trans_status: session.result.transStatus,
      ...(session.result.eci === undefined ? {} : { electronic_commerce_indicator: session.result.eci }),
      ...(session.result.cryptogram === undefined
        ? {}
        : { three_ds_cryptogram: session.result.cryptogram, authentication_value: session.result.cryptogram }),
      transaction_id: session.dsTransId,
      three_ds_server_trans_id: session.threeDsServerTransId,
      version: THREE_DS_VERSION,
      ...(session.result.transStatusReason === undefined
        ? {}
        : { trans_status_reason: session.result.transStatusReason }),
      ...(session.result.cardholderInfo === undefined ? {} : { cardholder_info: session.result.cardholderInfo })
    }
    : undefined
  return {
    authentication_session_id: session.id,
    status: session.status,
    ...(action === undefined ? {} : { action }),
    ...(result === undefined ? {} : { authentication_result: result })
  }
}

const encodeSession = Schema.encodeSync(AuthenticationSessionWire)
const encodeWithResult = Schema.encodeSync(AuthenticationSessionWithResultWire)

const badRequest = (message: string, param?: string) =>
  new AuthnBadRequest({
    type: "invalid_request",
    code: "invalid_card",
    message,
    ...(param === undefined ? {} : { param })
  })

/** The rest of the request is kept in clear, so a card number in any other field is refused. */
const noCardNumberOutsideItsField = (body: unknown): Effect.Effect<void, AuthnBadRequest> => {
  const path = cardNumberPath(body)
  return path === undefined ? Effect.void : Effect.fail(badRequest(`${path} ${MISPLACED_CARD_NUMBER}.`, path))
}

type AuthnFailure = AuthnBadRequest | AuthnNotFound | AuthnConflict | AuthnServiceUnavailable | AuthnInternalError

const storageFailure = (error: StorageError): Effect.Effect<never, AuthnServiceUnavailable | AuthnInternalError> =>
  error.reason === "unavailable"
    ? Effect.zipRight(
      Effect.zipRight(
        Effect.logError("authentication storage unavailable"),
        setRetryAfter(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.delegate_authentication)
      ),
      Effect.fail(
        new AuthnServiceUnavailable({
          type: "service_unavailable",
          code: "duplicate_request",
          message: "The service is temporarily unavailable; retry shortly."
        })
      )
    )
    : Effect.zipRight(
      Effect.logError("authentication storage failure", error.cause),
      Effect.fail(
        new AuthnInternalError({
          type: "processing_error",
          code: "invalid_card",
          message: "An unexpected error occurred."
        })
      )
    )

const stepFailure = (error: AuthenticationStepError): Effect.Effect<never, AuthnFailure> => {
  switch (error._tag) {
    case "AuthenticationSessionNotFound":
      return Effect.fail(
        new AuthnNotFound({
          type: "invalid_request",
          code: "invalid_card",
          message: `No authentication session ${maskCardNumbers(error.id)}.`,
          param: "$.authentication_session_id"
        })
      )
    case "AuthenticationStepRefused":
      return error.param !== undefined
        ? Effect.fail(badRequest(error.message, error.param))
        : Effect.fail(new AuthnConflict({ type: "invalid_request", code: "duplicate_request", message: error.message }))
    case "StorageError":
      return storageFailure(error)
  }
}

/** Only 2026-04-17 defines this API. */
const requireVersion = Effect.flatMap(RequestedApiVersion, (version) =>
  version === DELEGATE_AUTHENTICATION_VERSION
    ? Effect.void
    : Effect.fail(
      new BadRequest({
        type: "invalid_request",
        code: "unsupported_api_version",
        message: `The Delegate Authentication API is defined by API-Version ${DELEGATE_AUTHENTICATION_VERSION} only.`,
        param: "$.headers['API-Version']",
        supported_versions: [DELEGATE_AUTHENTICATION_VERSION]
      })
    ))

const inThisApi = <A, E extends { readonly _tag: string }, R>(decode: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    decode,
    (error): error is Extract<E, BadRequest> => error instanceof BadRequest,
    (error) => Effect.fail(badRequest(error.message, error.param))
  )

const decodeCreate = inThisApi(decodeDeclaredBody(DelegateAuthenticationGroup, "create"))
const decodeAuthenticate = inThisApi(decodeDeclaredBody(DelegateAuthenticationGroup, "authenticate"))

export const DelegateAuthenticationHandlers = groupHandlers(
  DelegateAuthenticationApi,
  "delegateAuthentication",
  Effect.fnUntraced(function*(handlers) {
    const service = yield* IssuerAuthentication
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const perMinute = config.delegateRateLimitPerMinute
    const bucket = { capacity: perMinute, refillPerSecond: perMinute / 60 }
    const answer = (status: 200 | 201): RouteAnswer<AuthenticationSession> => ({
      success: (session) =>
        HttpServerResponse.unsafeJson(encodeSession(sessionWire(session, config.publicBaseUrl, false)), { status })
    })
    /** Each request spends a token of the API key's budget before its body is read. */
    const admitted = Effect.gen(function*() {
      yield* requireVersion
      const client = yield* CurrentClient
      yield* limiter.consume(`delegate_authentication:${client.keyId}`, bucket).pipe(
        Effect.catchTag("RateLimited", (limited) =>
          Effect.zipRight(
            setRetryAfter(limited.retryAfterSeconds),
            Effect.fail(
              new AuthnRateLimited({
                type: "rate_limit_exceeded",
                code: "duplicate_request",
                message: `Too many authentication requests; retry after ${limited.retryAfterSeconds} s.`
              })
            )
          ))
      )
      return client
    })
    return handlers
      .handleRaw(
        "create",
        Effect.fnUntraced(function*() {
          const client = yield* admitted
          const body = yield* decodeCreate
          if (!luhnValid(body.payment_method.number)) {
            return yield* badRequest("The card number is not valid.", "$.payment_method.number")
          }
          yield* noCardNumberOutsideItsField({
            ...body,
            payment_method: { ...body.payment_method, number: "" }
          })
          return yield* service.create({
            merchantId: body.merchant_id,
            acquirerDetails: body.acquirer_details,
            card: {
              number: body.payment_method.number,
              expMonth: body.payment_method.exp_month,
              expYear: body.payment_method.exp_year
            },
            amount: body.amount.value,
            currency: body.amount.currency,
            channelGiven: body.channel !== undefined,
            checkoutSessionId: body.checkout_session_id,
            challengeNotificationUrl: body.challenge_notification_url
          }, client.keyId).pipe(answeredWith(answer(201)), Effect.catchTag("StorageError", storageFailure))
        })
      )
      .handleRaw(
        "authenticate",
        Effect.fnUntraced(function*({ path }) {
          const client = yield* admitted
          const body = yield* decodeAuthenticate
          yield* noCardNumberOutsideItsField(body)
          return yield* service.authenticate(path.authentication_session_id, client.keyId, {
            fingerprintCompletion: body.fingerprint_completion,
            channelGiven: body.channel !== undefined,
            challengeNotificationUrl: body.challenge_notification_url,
            checkoutSessionId: body.checkout_session_id
          }).pipe(answeredWith(answer(200)), Effect.catchAll(stepFailure))
        })
      )
      .handle(
        "get",
        Effect.fnUntraced(function*({ path }) {
          const client = yield* admitted
          const session = yield* service.get(path.authentication_session_id, client.keyId).pipe(
            Effect.catchAll(stepFailure)
          )
          return HttpServerResponse.unsafeJson(encodeWithResult(sessionWire(session, config.publicBaseUrl, true)))
        })
      )
  })
)

const AuthnRoleEnabledLive = Layer.effect(
  AuthnRoleEnabled,
  Effect.map(
    AppConfig,
    (config) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        config.roles.has("delegate_authentication")
          ? Effect.void
          : Effect.fail(
            new NotFound({
              type: "invalid_request",
              code: "not_found",
              message: `No route ${request.method} ${maskCardNumbers(request.url.split("?")[0]!)}.`
            })
          ))
  )
)

const AuthnBearerLive = Layer.effect(
  AuthnBearer,
  makeBearerCheck("agent", (problem) =>
    problem === "unauthorized"
      ? new AuthnUnauthorized({
        type: "invalid_request",
        code: "invalid_card",
        message: "A valid API key is required (Authorization: Bearer <key>)."
      })
      : new AuthnForbidden({
        type: "invalid_request",
        code: "invalid_card",
        message: forbiddenMessage("agent")
      }))
)

const AcsFormBodyLive = Layer.succeed(
  AcsFormBody,
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) =>
      mediaTypeOf(request.headers["content-type"]) === "application/x-www-form-urlencoded"
        ? Effect.void
        : Effect.fail(
          new BadRequest({
            type: "invalid_request",
            code: "invalid_content_type",
            message: "The issuer's pages take forms: Content-Type: application/x-www-form-urlencoded."
          })
        )
  )
)

export const AuthenticationMiddlewareLive = Layer.mergeAll(AuthnRoleEnabledLive, AuthnBearerLive, AcsFormBodyLive)
