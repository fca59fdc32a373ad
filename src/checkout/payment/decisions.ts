/** The completion's payment decisions (`completion.ts`): the credential, the amount, the attempt, step 1. */
import { Effect, Either, Option } from "effect"
import type { CatalogSnapshot } from "../../catalog/model/catalog.ts"
import { isPayingOutcome, notAuthenticatedReason } from "../../payments/model/issuer-authentication.ts"
import {
  BUILTIN_PROVIDER_ALIASES,
  type ChargeRequest,
  credentialRef,
  type PaymentCredential,
  PaymentDeclined,
  type PaymentRejected
} from "../../payments/model/payment.ts"
import { InvalidPaymentData, PaymentInProgress } from "../session/errors.ts"
import { reduce } from "../session/reducer.ts"
import type { MessageError, PaymentData } from "../session/schemas.ts"
import {
  type CompleteSessionInput,
  type DiscountUnavailable,
  isActive,
  type PriceChanged,
  type ReducerContext,
  type ReducerError,
  type Session,
  SessionCommand
} from "../session/session.ts"
import { type PaymentAttempt } from "./attempt.ts"

/** Under way from step 1 until settled: completed, declined, or by the sweep. */
export const paymentPending = (latest: Option.Option<PaymentAttempt>): boolean => Option.isSome(attemptUnderWay(latest))

export const attemptUnderWay = (latest: Option.Option<PaymentAttempt>): Option.Option<PaymentAttempt> =>
  Option.filter(latest, (attempt) => attempt.state === "pending")

/** A session being paid is not changed, so that the order a charge makes is the session charged. */
export const refuseWhilePaying = (
  { latestAttempt, session }: { readonly latestAttempt: Option.Option<PaymentAttempt>; readonly session: Session }
): Effect.Effect<void, PaymentInProgress> =>
  isActive(session.status) && paymentPending(latestAttempt)
    ? Effect.fail(new PaymentInProgress({ sessionId: session.id }))
    : Effect.void

/** A handler the catalog offers, or (legacy shape) a provider a handler's PSP or a built-in alias names. */
export const resolveCredential = (
  paymentData: PaymentData,
  catalog: CatalogSnapshot
): Either.Either<PaymentCredential, InvalidPaymentData> => {
  if (paymentData.handler_id !== undefined) {
    const handler = catalog.paymentHandlers.find((offered) => offered.id === paymentData.handler_id)
    if (handler === undefined) {
      return Either.left(
        new InvalidPaymentData({
          param: "$.payment_data.handler_id",
          message: `$.payment_data.handler_id must name a payment handler offered on the session (${
            catalog.paymentHandlers.map((h) => h.id).join(", ")
          })`
        })
      )
    }
    return Either.right({
      kind: "handler",
      handlerId: paymentData.handler_id,
      psp: handler.psp,
      instrumentType: paymentData.instrument.type,
      credentialType: paymentData.instrument.credential.type,
      token: paymentData.instrument.credential.token
    })
  }
  const providers = [
    ...new Set([...catalog.paymentHandlers.map((handler) => handler.psp), ...BUILTIN_PROVIDER_ALIASES])
  ]
  if (!providers.includes(paymentData.provider)) {
    return Either.left(
      new InvalidPaymentData({
        param: "$.payment_data.provider",
        message: `$.payment_data.provider must name the merchant's payment service provider (${providers.join(", ")})`
      })
    )
  }
  return Either.right({ kind: "legacy", provider: paymentData.provider, token: paymentData.token })
}

/** The amount to charge: the session's `total` line. */
export const sessionTotal = (session: Session): number =>
  session.totals.find((total) => total.type === "total")?.amount ?? 0

/** The message a failed payment leaves on the session, at what failed (the payment data unless said). */
export const paymentMessage = (error: PaymentDeclined | PaymentRejected): MessageError => ({
  type: "error",
  code: "payment_declined",
  param: error.param ?? "$.payment_data",
  content_type: "plain",
  content: error.message
})

/** The pending attempt if for the same credential and amount (its key gets the first charge), else a new one. */
export const chooseAttempt = (
  latest: Option.Option<PaymentAttempt>,
  session: Session,
  credential: PaymentCredential,
  now: number
): Either.Either<{ readonly attempt: PaymentAttempt; readonly isNew: boolean }, PaymentInProgress> => {
  const amount = sessionTotal(session)
  const previous = Option.getOrUndefined(latest)
  if (previous?.state === "pending") {
    return previous.amount === amount && previous.credentialRef === credentialRef(credential)
      ? Either.right({ attempt: previous, isNew: false })
      : Either.left(new PaymentInProgress({ sessionId: session.id }))
  }
  const sequence = (previous?.sequence ?? 0) + 1
  return Either.right({
    isNew: true,
    attempt: {
      sessionId: session.id,
      sequence,
      idempotencyKey: `${session.id}:${sequence}`,
      amount,
      currency: session.currency,
      credentialRef: credentialRef(credential),
      state: "pending",
      chargeId: undefined,
      createdAt: now,
      updatedAt: now
    }
  })
}

export const chargeRequest = (
  attempt: PaymentAttempt,
  credential: PaymentCredential,
  authentication: CompleteSessionInput["authentication_result"]
): ChargeRequest => ({
  sessionId: attempt.sessionId,
  amount: attempt.amount,
  currency: attempt.currency,
  credential,
  idempotencyKey: attempt.idempotencyKey,
  authentication
})

/** The request's version has the flow, and the session supports 3ds (the merchant's and agent's intersection). */
export const canAuthenticate = (request: CompleteSessionInput, session: Session): boolean =>
  request.canAuthenticate === true && (session.capabilities.interventions?.supported ?? []).includes("3ds")

export const authenticationUnavailable = (request: CompleteSessionInput): string =>
  `This card requires 3-D Secure authentication by its issuer, which ${
    request.canAuthenticate === true
      ? "this checkout session does not offer (the agent did not declare 3ds in capabilities.interventions.supported, or the merchant does not offer it)"
      : "this API version cannot carry out (complete with an API version that has the authentication flow)"
  }. Nothing was charged; pay with another card.`

const prepareCompletion = (request: CompleteSessionInput) =>
  SessionCommand.PrepareCompletion({
    buyer: request.buyer,
    details: request.details,
    fulfillment_address: request.fulfillment_address,
    canAuthenticate: request.canAuthenticate,
    authenticating: request.authentication_result !== undefined
  })

/**
 * Step 1, locked or not; a discount that ended is dropped, a changed price re-prices the session, and the
 * agent is asked to review it: never charge another total than the one the agent saw.
 */
export type BeginDecision =
  | { readonly _tag: "Reprice"; readonly failure: DiscountUnavailable | PriceChanged }
  | { readonly _tag: "Refuse"; readonly paying: Session; readonly failure: PaymentDeclined }
  | {
    readonly _tag: "Pay"
    readonly paying: Session
    readonly attempt: PaymentAttempt
    readonly isNew: boolean
    readonly charge: ChargeRequest
  }

export const decideBegin = (
  { latestAttempt, session }: { readonly latestAttempt: Option.Option<PaymentAttempt>; readonly session: Session },
  request: CompleteSessionInput,
  credential: PaymentCredential,
  started: number,
  contextAt: (pricedAt: number | undefined) => ReducerContext
): Either.Either<BeginDecision, ReducerError | PaymentInProgress> => {
  // A payment under way is priced as when it began, so a retry charges what the first try did.
  const pending = attemptUnderWay(latestAttempt)
  const preparing = reduce(
    session,
    prepareCompletion(request),
    contextAt(Option.getOrUndefined(pending)?.createdAt)
  )
  // Of a payment under way the total was shown and is charged, whatever the catalog says since.
  const resumed: Either.Either<{ readonly session: Session }, ReducerError> =
    Either.isLeft(preparing) && preparing.left._tag === "PriceChanged" && Option.isSome(pending)
      ? Either.right({ session })
      : preparing
  if (Either.isLeft(resumed)) {
    const failure = resumed.left
    // A payment under way may have been charged: past the expiry it stays in progress, not expired,
    // until the settlement decides it on the provider's answer.
    if (Option.isSome(pending) && failure._tag === "SessionFinal") {
      return Either.left(new PaymentInProgress({ sessionId: session.id }))
    }
    return failure._tag === "DiscountUnavailable" || failure._tag === "PriceChanged"
      ? Either.right({ _tag: "Reprice", failure })
      : Either.left(failure)
  }
  const paying = resumed.right.session
  const result = request.authentication_result
  if (result !== undefined && !isPayingOutcome(result)) {
    const failure = new PaymentDeclined({
      reason: "authentication_failed",
      message: notAuthenticatedReason(result),
      param: "$.authentication_result"
    })
    return Either.right({ _tag: "Refuse", paying, failure })
  }
  return Either.map(
    chooseAttempt(latestAttempt, paying, credential, started),
    ({ attempt, isNew }): BeginDecision => ({
      _tag: "Pay",
      paying,
      attempt,
      isNew,
      charge: chargeRequest(attempt, credential, result)
    })
  )
}
