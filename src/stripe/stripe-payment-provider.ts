/**
 * Stripe as a payment provider: a shared payment granted token (`spt_…`) paid by one PaymentIntent per
 * payment attempt, exactly once (`docs/concurrency.md`, "Stripe"). The attempt's key is recorded first;
 * the PaymentIntent is created unconfirmed under `<key>:create` and its id recorded; it is confirmed
 * under `<key>:confirm`. Stripe answers a repeat of either with the first answer, so a retry, a crash
 * between steps or a concurrent request of the attempt finds the one PaymentIntent and never confirms a
 * second. A PaymentIntent left confirmable by a decline, or never confirmed when the settlement
 * decides, is canceled, so that nothing can charge it later. One the issuer wants 3-D Secure for is
 * canceled too and answered `AuthenticationRequired`: the agent authenticates, and the next attempt
 * (a new key, a new PaymentIntent) is confirmed with its result (`docs/three-d-secure.md`, "Stripe").
 */
import { Clock, Context, Effect, Either, Layer, Option } from "effect"
import type Stripe from "stripe"
import type { StorageError } from "../db/storage-error.ts"
import { VOIDED_KEY_MESSAGE } from "../payments/builtin-payment-processor.ts"
import { authenticationRequestFor, directoryServerOf } from "../payments/issuer-authentication-check.ts"
import {
  AuthenticationRequired,
  type Charge,
  type ChargeRequest,
  credentialParam,
  type PaymentDeclined,
  PaymentPending,
  PaymentRejected,
  type PendingCharge
} from "../payments/model/payment.ts"
import type { PaymentProviderService } from "../payments/payment-provider.ts"
import { AppConfig } from "../platform/config.ts"
import { FaultInjection } from "../platform/fault-injection.ts"
import {
  credentialRefusal,
  declineOf,
  intentState,
  type IntentView,
  needsActionDecline,
  refusalKind
} from "./model/payment-intent-outcome.ts"
import { type StripeFailure, StripeUnavailable } from "./model/stripe-failure.ts"
import { isSharedPaymentToken } from "./model/stripe-route.ts"
import { authenticationNotAccepted, threeDSecureOf, tokenCardBrand } from "./model/three-d-secure.ts"
import { confirmParams, createParams, type Paying } from "./payment-intent-params.ts"
import { StripeClient } from "./stripe-client.ts"
import { StripePaymentStore } from "./stripe-payment-store.ts"

/** When to retry after Stripe could not be reached (its own `Retry-After` wins) or is still processing. */
export const STRIPE_RETRY_AFTER_SECONDS = 5
/** A concurrent request of the same attempt holds its Stripe key: a retry soon finds its answer. */
const IN_USE_RETRY_AFTER_SECONDS = 1

export const CANCELED_MESSAGE =
  "This payment attempt was canceled at Stripe; nothing was charged. Complete the checkout again to pay."

export interface StripePaymentsShape extends PaymentProviderService {
  /** Whether Stripe is configured (a key): its handlers are offered only then. */
  readonly configured: boolean
}

export class StripePayments extends Context.Tag("acp/StripePayments")<StripePayments, StripePaymentsShape>() {}

type Failure = PaymentDeclined | PaymentRejected | PaymentPending | AuthenticationRequired

export const StripePaymentProvider = Layer.effect(
  StripePayments,
  Effect.gen(function*() {
    const stripe = yield* StripeClient
    const store = yield* StripePaymentStore
    const faults = yield* FaultInjection
    const config = yield* AppConfig
    // An agent's result reaches the issuer only through Stripe's import of 3-D Secure results.
    const threeDSecureImport = stripe.configured && config.stripe.threeDSecureImport

    const rejected = (paying: Paying, message: string) => new PaymentRejected({ message, param: paying.param })

    /** Unknown outcome, or not Stripe's to decide now: the attempt stays pending. */
    const notNow = (name: string, failure: StripeFailure) => {
      const inUse = failure._tag === "StripeIdempotencyConflict"
      const pending = new PaymentPending({
        reason: inUse ? "processing" : "unavailable",
        retryAfterSeconds: inUse
          ? IN_USE_RETRY_AFTER_SECONDS
          : (failure._tag === "StripeUnavailable" ? failure.retryAfterSeconds : undefined) ??
            STRIPE_RETRY_AFTER_SECONDS
      })
      const why = failure._tag === "StripeUnavailable"
        ? failure.reason
        : failure._tag === "StripeMisconfigured"
        ? `the secret key was refused (${failure.statusCode ?? "no status"}): check STRIPE_SECRET_KEY`
        : failure._tag === "StripeIdempotencyConflict"
        ? "a request with the same key is in progress, or its parameters differ"
        : failure.message
      return Effect.zipRight(
        failure._tag === "StripeMisconfigured"
          ? Effect.logError(`stripe ${name}: ${why}`)
          : Effect.logWarning(`stripe ${name}: ${why}`),
        Effect.fail(pending)
      )
    }

    const call = <A>(name: string, run: (sdk: Stripe) => Promise<A>) => Effect.either(stripe.call(name, run))

    const retrieve = (id: string): Effect.Effect<IntentView, PaymentPending> =>
      Effect.flatMap(
        call("paymentIntents.retrieve", (sdk) => sdk.paymentIntents.retrieve(id)),
        Either.match({ onLeft: (failure) => notNow("paymentIntents.retrieve", failure), onRight: Effect.succeed })
      )

    /** Cancels what could still be charged, then fails with `failure`; a PaymentIntent that moved on is read again. */
    const cancelThen = <F extends Failure>(paying: Paying, intent: IntentView, failure: F) =>
      Effect.flatMap(
        call(
          "paymentIntents.cancel",
          (sdk) => sdk.paymentIntents.cancel(intent.id, {}, { idempotencyKey: `${paying.idempotencyKey}:cancel` })
        ),
        (canceled): Effect.Effect<Charge, F | PaymentPending> => {
          if (Either.isRight(canceled)) return Effect.fail(failure)
          const error = canceled.left
          if (error._tag !== "StripeRequestRefused" || refusalKind(error) !== "state") {
            return notNow("paymentIntents.cancel", error)
          }
          return Effect.flatMap(retrieve(intent.id), (now): Effect.Effect<Charge, F | PaymentPending> => {
            const state = intentState(now)
            return state._tag === "Canceled"
              ? Effect.fail(failure)
              : state._tag === "Succeeded"
              ? Effect.succeed(chargeOf(paying, now))
              : notNow("paymentIntents.cancel", error)
          })
        }
      )

    const chargeOf = (paying: Paying, intent: IntentView): Charge => ({
      id: intent.id,
      amount: intent.amount,
      currency: paying.currency
    })

    /** The attempt's answer from its PaymentIntent; `confirm` once if it was never confirmed. */
    const answer = (
      paying: Paying,
      intent: IntentView,
      confirm: boolean
    ): Effect.Effect<Charge, Failure> => {
      const state = intentState(intent)
      switch (state._tag) {
        case "Succeeded":
          return Effect.succeed(chargeOf(paying, intent))
        case "Processing":
          return Effect.fail(
            new PaymentPending({ reason: "processing", retryAfterSeconds: STRIPE_RETRY_AFTER_SECONDS })
          )
        case "Canceled":
          return Effect.fail(rejected(paying, CANCELED_MESSAGE))
        case "Declined":
          return cancelThen(paying, intent, declineOf(state, paying.threeDSecure !== undefined))
        case "NeedsAction":
          return needsAction(paying, intent)
        case "Unconfirmed":
          return confirm
            ? confirmIntent(paying, intent)
            : notNow(
              "paymentIntents.confirm",
              new StripeUnavailable({
                reason: `${intent.id} is ${intent.status} after its confirmation`,
                retryAfterSeconds: undefined
              })
            )
      }
    }

    /**
     * The issuer wants 3-D Secure: with a result presented, it did not take it (a decline); else what the
     * agent authenticates with, the scheme from the token's card (read before the cancel, so that a
     * failed read leaves the attempt to a retry). A scheme without a directory server is a decline.
     */
    const needsAction = (paying: Paying, intent: IntentView): Effect.Effect<Charge, Failure> => {
      if (paying.threeDSecure !== undefined) return cancelThen(paying, intent, authenticationNotAccepted())
      if (!threeDSecureImport) return cancelThen(paying, intent, needsActionDecline())
      return Effect.flatMap(
        call(
          "sharedPayment.grantedTokens.retrieve",
          // The SDK has no resource for shared payment tokens yet.
          (sdk) => sdk.rawRequest("GET", `/v1/shared_payment/granted_tokens/${encodeURIComponent(paying.token)}`)
        ),
        (token): Effect.Effect<Charge, Failure> => {
          if (Either.isLeft(token) && token.left._tag !== "StripeRequestRefused") {
            return notNow("sharedPayment.grantedTokens.retrieve", token.left)
          }
          const brand = Either.isRight(token) ? tokenCardBrand(token.right) : undefined
          const directoryServer = brand === undefined ? undefined : directoryServerOf(brand)
          return directoryServer === undefined
            ? cancelThen(paying, intent, needsActionDecline())
            : cancelThen(
              paying,
              intent,
              new AuthenticationRequired({ request: authenticationRequestFor(directoryServer, config.merchantId) })
            )
        }
      )
    }

    const confirmIntent = (paying: Paying, intent: IntentView): Effect.Effect<Charge, Failure> =>
      Effect.flatMap(
        call(
          "paymentIntents.confirm",
          (sdk) =>
            sdk.paymentIntents.confirm(intent.id, confirmParams(paying), {
              idempotencyKey: `${paying.idempotencyKey}:confirm`
            })
        ),
        (confirmed) => {
          if (Either.isRight(confirmed)) {
            return Effect.zipRight(faults.at("stripe.after-confirm"), answer(paying, confirmed.right, false))
          }
          const error = confirmed.left
          switch (error._tag) {
            case "StripeCardError":
              // A decline leaves the PaymentIntent confirmable with another payment method: closed for good.
              return cancelThen(paying, intent, declineOf(error, paying.threeDSecure !== undefined))
            case "StripeRequestRefused": {
              const kind = refusalKind(error)
              if (kind === "busy") return notNow("paymentIntents.confirm", error)
              if (kind === "state") {
                return Effect.flatMap(retrieve(intent.id), (now) => answer(paying, now, false))
              }
              return cancelThen(paying, intent, rejected(paying, credentialRefusal(error.message)))
            }
            default:
              return notNow("paymentIntents.confirm", error)
          }
        }
      )

    /** The attempt's PaymentIntent, created unconfirmed (a replay of `<key>:create` returns the same one). */
    const createIntent = (paying: Paying): Effect.Effect<IntentView, PaymentRejected | PaymentPending> =>
      Effect.flatMap(
        call(
          "paymentIntents.create",
          (sdk) =>
            sdk.paymentIntents.create(createParams(paying), { idempotencyKey: `${paying.idempotencyKey}:create` })
        ),
        (created): Effect.Effect<IntentView, PaymentRejected | PaymentPending> => {
          if (Either.isRight(created)) return Effect.succeed(created.right)
          const error = created.left
          // A token Stripe will not take (gone, revoked, expired) or an amount it refuses: no PaymentIntent.
          return (error._tag === "StripeRequestRefused" && refusalKind(error) === "credential") ||
              error._tag === "StripeCardError"
            ? Effect.fail(rejected(paying, credentialRefusal(error.message)))
            : notNow("paymentIntents.create", error)
        }
      )

    const payingOf = (request: ChargeRequest): Paying => ({
      sessionId: request.sessionId,
      idempotencyKey: request.idempotencyKey,
      amount: request.amount,
      currency: request.currency,
      token: request.credential.token,
      param: credentialParam(request.credential),
      threeDSecure: request.authentication === undefined ? undefined : threeDSecureOf(request.authentication)
    })

    const charge = Effect.fnUntraced(function*(request: ChargeRequest) {
      const paying = payingOf(request)
      const now = yield* Clock.currentTimeMillis
      const recorded = yield* store.claim({
        key: paying.idempotencyKey,
        sessionId: paying.sessionId,
        state: "open",
        now
      })
      if (recorded.state === "voided") return yield* rejected(paying, VOIDED_KEY_MESSAGE)
      if (recorded.paymentIntentId !== undefined) {
        // A retry, or a request racing this one: what the PaymentIntent is now decides.
        return yield* answer(paying, yield* retrieve(recorded.paymentIntentId), true)
      }
      const created = yield* createIntent(paying)
      yield* faults.at("stripe.after-create")
      yield* store.recordIntent(paying.idempotencyKey, created.id, yield* Clock.currentTimeMillis)
      return yield* answer(paying, created, true)
    })

    /** Never charges: reads the attempt's PaymentIntent; one never confirmed is canceled and the key closed. */
    const settleCharge = Effect.fnUntraced(function*(attempt: PendingCharge) {
      const paying: Paying = {
        sessionId: attempt.sessionId,
        idempotencyKey: attempt.idempotencyKey,
        amount: attempt.amount,
        currency: attempt.currency,
        token: attempt.credentialRef,
        param: "$.payment_data"
      }
      const now = yield* Clock.currentTimeMillis
      const closed = () => Effect.as(store.markVoided(paying.idempotencyKey, now), Option.none<never>())
      const recorded = yield* store.claim({
        key: paying.idempotencyKey,
        sessionId: paying.sessionId,
        state: "voided",
        now
      })
      let intentId = recorded.paymentIntentId
      if (intentId === undefined) {
        // Closed now (no request got as far as Stripe), or closed before.
        if (recorded.state === "voided") return Option.none()
        // The request died around its create: the replay answers the PaymentIntent it made, if any,
        // and makes at most an unconfirmed one.
        const created = yield* Effect.either(createIntent(paying))
        if (Either.isLeft(created)) {
          if (created.left._tag === "PaymentPending") return yield* created.left
          return yield* closed()
        }
        intentId = created.right.id
        yield* store.recordIntent(paying.idempotencyKey, intentId, now)
      }
      const intent = yield* retrieve(intentId)
      const state = intentState(intent)
      const settled = (failure: Failure) =>
        Effect.flatMap(
          Effect.either(cancelThen(paying, intent, failure)),
          (
            outcome
          ): Effect.Effect<Option.Option<Either.Either<Charge, PaymentDeclined>>, PaymentPending | StorageError> =>
            Either.isRight(outcome)
              ? Effect.succeedSome(Either.right(outcome.right))
              : outcome.left._tag === "PaymentPending"
              ? Effect.fail(outcome.left)
              : outcome.left._tag === "PaymentDeclined"
              ? Effect.succeedSome(Either.left(outcome.left))
              : closed()
        )
      switch (state._tag) {
        case "Succeeded":
          return Option.some(Either.right(chargeOf(paying, intent)))
        case "Processing":
          return yield* new PaymentPending({ reason: "processing", retryAfterSeconds: STRIPE_RETRY_AFTER_SECONDS })
        case "Canceled":
          return yield* closed()
        case "Unconfirmed":
          return yield* settled(rejected(paying, CANCELED_MESSAGE))
        case "Declined":
          return yield* settled(declineOf(state))
        case "NeedsAction":
          return yield* settled(needsActionDecline())
      }
    })

    const refuse = (request: ChargeRequest, message: string, param = credentialParam(request.credential)) =>
      Effect.fail(new PaymentRejected({ message, param }))

    return {
      configured: stripe.configured,
      // Asked for by the issuer at the confirm, carried out with the agent's own authentication provider.
      threeDSecure: threeDSecureImport,
      // Nothing is held at Stripe before the charge: the token's own limits are checked by the confirm. A
      // result is Stripe's and the issuer's to verify (its cryptogram): no record here to check it against.
      authorize: (request) =>
        !stripe.configured
          ? refuse(request, "This merchant does not accept Stripe shared payment tokens.")
          : !isSharedPaymentToken(request.credential.token)
          ? refuse(request, "This payment handler takes a Stripe shared payment token (spt_…).")
          : request.authentication !== undefined && !threeDSecureImport
          ? refuse(
            request,
            "This merchant's Stripe account does not import 3-D Secure results: pay without authentication_result.",
            "$.authentication_result"
          )
          : request.authentication !== undefined && threeDSecureOf(request.authentication) === undefined
          ? refuse(
            request,
            "Only an authentication that authenticated (or was acknowledged) pays, with its outcome_details.",
            "$.authentication_result"
          )
          : Effect.void,
      charge,
      release: () => Effect.void,
      settleCharge
    } satisfies StripePaymentsShape
  })
)
