/**
 * The completion's payment decisions (`checkout/completion.ts`), taken before any store step or
 * inside its first: which credential pays (as the merchant offers them), the amount, what step 1
 * decides on a snapshot of the session (`decideBegin`), the attempt it is paid under and the
 * provider's request for it, whether issuer authentication can be asked of the agent, and the
 * message a failed payment leaves on the session.
 */
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
  type ReducerContext,
  type ReducerError,
  type Session,
  SessionCommand
} from "../session/session.ts"
import { type PaymentAttempt } from "./attempt.ts"

/**
 * Whether a payment of the session is under way: its latest attempt is pending, from step 1 of
 * completing (which recorded it) until the payment is settled (its completion, its decline, or
 * the sweep's settlement).
 */
export const paymentPending = (latest: Option.Option<PaymentAttempt>): boolean => Option.isSome(attemptUnderWay(latest))

/** The latest attempt when it is pending (see `paymentPending`). */
export const attemptUnderWay = (latest: Option.Option<PaymentAttempt>): Option.Option<PaymentAttempt> =>
  Option.filter(latest, (attempt) => attempt.state === "pending")

/**
 * Fails while a payment of the active session is under way: a session being paid is not changed
 * (its items, total or status), so the order a charge makes is the session that was charged. A
 * final session is answered as final, whatever an earlier release left pending on it.
 */
export const refuseWhilePaying = (
  { latestAttempt, session }: { readonly latestAttempt: Option.Option<PaymentAttempt>; readonly session: Session }
): Effect.Effect<void, PaymentInProgress> =>
  isActive(session.status) && paymentPending(latestAttempt)
    ? Effect.fail(new PaymentInProgress({ sessionId: session.id }))
    : Effect.void

/**
 * The credential of a complete request, checked against what the merchant offers: a payment
 * handler of the catalog, or (legacy shape) a provider named by a handler's PSP or one of the
 * names the built-in processor answers to.
 */
export const resolveCredential = (
  paymentData: PaymentData,
  catalog: CatalogSnapshot
): Either.Either<PaymentCredential, InvalidPaymentData> => {
  if (paymentData.handler_id !== undefined) {
    if (!catalog.paymentHandlers.some((handler) => handler.id === paymentData.handler_id)) {
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

/**
 * The attempt to pay `session` with, given its latest one: the pending attempt a crashed or
 * concurrent request left when it is for the same credential and amount (its key makes the
 * provider answer the first charge), else a new one with the next sequence. A pending attempt for
 * another credential or amount is another payment under way.
 */
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

/** The provider's request for `attempt`: every retry of the attempt sends the same key. */
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

/**
 * Whether the agent can answer `authentication_required`: its version has the flow, and the
 * session offers 3-D Secure (the merchant offers it, the provider carries it out, and the agent
 * declared it, or declared nothing).
 */
export const canAuthenticate = (request: CompleteSessionInput, session: Session): boolean =>
  request.canAuthenticate === true && (session.capabilities.interventions?.supported ?? []).includes("3ds")

/** Why a card that needs issuer authentication cannot be paid with on this request. */
export const authenticationUnavailable = (request: CompleteSessionInput): string =>
  `This card requires 3-D Secure authentication by its issuer, which ${
    request.canAuthenticate === true
      ? "this checkout session does not offer (the agent did not declare 3ds in capabilities.interventions.supported, or the merchant does not offer it)"
      : "this API version cannot carry out (complete with an API version that has the authentication flow)"
  }. Nothing was charged; pay with another card.`

/** What completing applies to the session before paying, whatever the payment's outcome. */
const prepareCompletion = (request: CompleteSessionInput) =>
  SessionCommand.PrepareCompletion({
    buyer: request.buyer,
    details: request.details,
    fulfillment_address: request.fulfillment_address,
    canAuthenticate: request.canAuthenticate,
    authenticating: request.authentication_result !== undefined
  })

/**
 * What step 1 decides on a snapshot of the session, locked or not (the one place it is decided):
 * the session re-priced without a discount that ended (answered 422, never charging more than the
 * total the agent saw), a payment refused on the agent's authentication result, or the attempt to
 * pay under (a new one, or the pending one a crashed or concurrent request left).
 */
export type BeginDecision =
  | { readonly _tag: "DropDiscount"; readonly failure: DiscountUnavailable }
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
  /** The reducer's context at `started`, priced at `pricedAt` when given. */
  contextAt: (pricedAt: number | undefined) => ReducerContext
): Either.Either<BeginDecision, ReducerError | PaymentInProgress> => {
  // A payment under way (a retry after a crash) is priced as when it began: a discount that ended
  // since does not re-price it, and the retry charges what the first try did.
  const pending = attemptUnderWay(latestAttempt)
  const preparing = reduce(
    session,
    prepareCompletion(request),
    contextAt(Option.getOrUndefined(pending)?.createdAt)
  )
  if (Either.isLeft(preparing)) {
    const failure = preparing.left
    // A payment under way may have been charged: a retry past the session's expiry is not answered
    // expired; the settlement decides the attempt on the provider's answer.
    if (Option.isSome(pending) && failure._tag === "SessionFinal") {
      return Either.left(new PaymentInProgress({ sessionId: session.id }))
    }
    return failure._tag === "DiscountUnavailable"
      ? Either.right({ _tag: "DropDiscount", failure })
      : Either.left(failure)
  }
  const paying = preparing.right.session
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
