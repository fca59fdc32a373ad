/**
 * Completing a checkout: two atomic steps around the provider's charge, so that a session is
 * charged at most once and a charged session always gets its order (see `docs/concurrency.md`,
 * "Completing"):
 *
 * 1. `beginPayment`, one transaction under the session's lock: check the session can be paid,
 *    record the payment attempt (or take over the pending one a crashed or concurrent request
 *    left), let the provider hold the credential, hold the applied coupons;
 * 2. the charge, outside any transaction, keyed by the attempt's idempotency key;
 * 3. `completePaid` on success: written optimistically, on the session as step 1 wrote it (one
 *    store step), else under the lock; `recordDecline` on a decline, under the lock.
 */
import { Clock, Effect, Either, Option } from "effect"
import type { CatalogSnapshot } from "../catalog/catalog.ts"
import type { StorageError } from "../db/storage-error.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer-service.ts"
import { BUILTIN_PROVIDER_ALIASES } from "../payments/builtin-payment-processor.ts"
import {
  type Charge,
  type ChargeRequest,
  credentialRef,
  type PaymentCredential,
  type PaymentDeclined,
  type PaymentRejected
} from "../payments/payment-provider.ts"
import { type CheckoutContext, found } from "./checkout-context-service.ts"
import { InvalidPaymentData, PaymentInProgress, type SessionNotFound } from "./checkout-errors.ts"
import type { MessageError, OrderSummary, PaymentData } from "./checkout-schemas.ts"
import { type PaymentAttempt, type SessionForPayment, writeOptimistically } from "./checkout-store.ts"
import {
  type CompleteSessionInput,
  type DiscountUnavailable,
  type ReducerError,
  type Session,
  SessionCommand,
  SessionFinal
} from "./session-model.ts"
import { reduce } from "./session-reducer.ts"
import { holdsUntil } from "./session-view.ts"

export type CompleteError =
  | ReducerError
  | PaymentInProgress
  | SessionNotFound
  | InvalidPaymentData
  | PaymentDeclined
  | PaymentRejected
  | StorageError

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

const paymentMessage = (error: PaymentDeclined | PaymentRejected): MessageError => ({
  type: "error",
  code: "payment_declined",
  param: error._tag === "PaymentRejected" ? error.param : "$.payment_data",
  content_type: "plain",
  content: error.message
})

/**
 * The attempt to pay `session` with, given its latest one: the pending attempt a crashed or
 * concurrent request left when it is for the same credential and amount (its key makes the
 * provider answer the first charge), else a new one with the next sequence. A pending attempt for
 * another credential or amount is another payment under way.
 */
const chooseAttempt = (
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

export const makeCheckoutCompletion = (ctx: CheckoutContext) => {
  const { payments, store } = ctx
  const lockForPayment = (id: string) => found(id, store.lockSessionForPayment(id))

  /** Step 1 (see the module comment). The buyer of the request is applied whatever the payment's outcome. */
  const beginPayment = (
    id: string,
    request: CompleteSessionInput,
    credential: PaymentCredential,
    started: number
  ) =>
    commitWithAnswer(
      store.transaction,
      Effect.gen(function*() {
        const { couponHolds, latestAttempt, session } = yield* lockForPayment(id)
        // Lock the coupon rows (id order) and count redemptions and holds.
        const redemptions = yield* ctx.couponUsage(session.discounts?.codes ?? [], started, id, true)
        const preparing = reduce(
          session,
          SessionCommand.PrepareCompletion({
            buyer: request.buyer,
            details: request.details,
            fulfillment_address: request.fulfillment_address
          }),
          ctx.reducerContext(started, new Map(), redemptions)
        )
        if (Either.isLeft(preparing) && preparing.left._tag === "DiscountUnavailable") {
          // Store the session re-priced without the discount, then answer 422: never charge more
          // than the total the agent saw.
          yield* store.sessions.update(preparing.left.session)
          return Either.left<DiscountUnavailable | PaymentDeclined | PaymentRejected>(preparing.left)
        }
        const paying = (yield* preparing).session
        const { attempt, isNew } = yield* chooseAttempt(latestAttempt, paying, credential, started)
        const charge: ChargeRequest = {
          sessionId: id,
          amount: attempt.amount,
          currency: attempt.currency,
          credential,
          idempotencyKey: attempt.idempotencyKey
        }
        const authorized = yield* Effect.either(payments.authorize(charge))
        if (Either.isLeft(authorized)) {
          if (authorized.left._tag === "StorageError") return yield* authorized.left
          const failed = yield* reduce(
            paying,
            SessionCommand.RecordPaymentFailure({ message: paymentMessage(authorized.left) }),
            ctx.reducerContext(started)
          )
          yield* store.updateSessionAndReservations(failed)
          return Either.left(authorized.left)
        }
        // Hold the applied coupons until the completion counts them (or a decline frees them); with
        // nothing to hold and nothing held, there is nothing to write.
        const held = (paying.discounts?.applied ?? []).map((applied) => applied.coupon.id)
        if (held.length > 0 || couponHolds.length > 0) yield* store.coupons.hold(id, held, holdsUntil(paying))
        const version = isNew ? yield* store.startPaymentAttempt(paying, attempt) : yield* store.sessions.update(paying)
        return Either.right({ attempt, charge, paying, version })
      }),
      (begun) => Either.isLeft(begun) ? Option.some(Either.left(begun.left)) : Option.none()
    )

  /** The order summary of a session being completed, with a new id. */
  const newOrder = (sessionId: string) =>
    Effect.map(ctx.ids.make("ord_"), (orderId): OrderSummary => ({
      id: orderId,
      checkout_session_id: sessionId,
      permalink_url: `${ctx.config.publicBaseUrl}/orders/${orderId}`
    }))

  /**
   * Step 3 after a successful charge: the completed session, the attempt's success, the order with
   * its `order_create` event, the coupon redemptions and the stock consumption in one store step —
   * optimistically on the session as step 1 wrote it; when it changed meanwhile (a concurrent
   * complete or cancel, the expiry sweep), decided again under the lock, where an attempt another
   * request settled first is answered from that.
   */
  const completePaid = (
    paid: { readonly attempt: PaymentAttempt; readonly paying: Session; readonly version: number },
    charged: Charge,
    now: number
  ) =>
    writeOptimistically(store.transaction, {
      snapshot: Effect.succeed<SessionForPayment>({
        session: paid.paying,
        version: paid.version,
        latestAttempt: Option.some(paid.attempt),
        couponHolds: []
      }),
      lockedSnapshot: lockForPayment(paid.attempt.sessionId),
      decide: ({ latestAttempt, session }) =>
        Effect.gen(function*() {
          const current = Option.getOrUndefined(latestAttempt)
          if (current?.sequence !== paid.attempt.sequence || current.state !== "pending") {
            return yield* session.status === "completed"
              ? Effect.fail(new SessionFinal({ status: "completed", command: "complete" }))
              : Effect.fail(new PaymentInProgress({ sessionId: session.id }))
          }
          const order = yield* newOrder(session.id)
          const completed =
            (yield* reduce(session, SessionCommand.MarkCompleted({ order }), ctx.reducerContext(now))).session
          return {
            completed: { ...completed, order },
            change: yield* ctx.orderEvents.orderCreated({ order, session: completed })
          }
        }),
      write: ({ change, completed }, { version }) =>
        store.completePaidCheckout({
          session: completed,
          version,
          attemptSequence: paid.attempt.sequence,
          chargeId: charged.id,
          now,
          order: change
        }),
      outcome: ({ completed }) => Either.right(completed)
    }).pipe(Effect.map(({ completed }) => completed))

  /**
   * Step 3 after a decline, under the session's lock: the decline is recorded (committed), the
   * credential and the coupon holds given back, and the session stays payable with the decline's
   * message — unless another request settled this attempt first. Fails with the decline.
   */
  const recordDecline = (
    attempt: PaymentAttempt,
    charge: ChargeRequest,
    failure: PaymentDeclined | PaymentRejected,
    now: number
  ) =>
    Effect.flatMap(
      commitWithAnswer(
        store.transaction,
        Effect.gen(function*() {
          const { latestAttempt, session } = yield* lockForPayment(attempt.sessionId)
          const current = Option.getOrUndefined(latestAttempt)
          if (current?.sequence !== attempt.sequence || current.state !== "pending") {
            if (session.status === "completed") {
              return yield* new SessionFinal({ status: "completed", command: "complete" })
            }
            if (current?.state !== "declined") return yield* new PaymentInProgress({ sessionId: session.id })
            return failure
          }
          yield* payments.release(charge)
          yield* store.coupons.releaseHolds(session.id)
          yield* store.paymentAttempts.update({ ...attempt, state: "declined", updatedAt: now })
          yield* store.updateSessionAndReservations(
            yield* reduce(
              session,
              SessionCommand.RecordPaymentFailure({ message: paymentMessage(failure) }),
              ctx.reducerContext(now)
            )
          )
          return failure
        }),
        (declined) => Option.some(Either.left(declined))
      ),
      Effect.fail
    )

  /**
   * Completes `id`: step 1, the charge with the attempt's key, step 3. A retry after a crash
   * anywhere reuses the pending attempt and its key, so the provider returns the first charge
   * instead of making a second; a concurrent complete of the same session does the same and then
   * finds the session completed (409).
   */
  const complete = (
    id: string,
    request: CompleteSessionInput
  ): Effect.Effect<Session & { readonly order: OrderSummary }, CompleteError> =>
    Effect.gen(function*() {
      const credential = yield* resolveCredential(request.payment_data, ctx.catalog)
      const begun = yield* beginPayment(id, request, credential, yield* Clock.currentTimeMillis)
      if (Either.isLeft(begun)) return yield* begun.left
      const charged = yield* Effect.either(payments.charge(begun.right.charge))
      if (Either.isLeft(charged) && charged.left._tag === "StorageError") return yield* charged.left
      // The charge's outcome is stored even when the request is interrupted from here on (the
      // client went away): uninterruptible, like the transactions themselves.
      return yield* Effect.uninterruptible(Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Either.isRight(charged)
          ? completePaid(begun.right, charged.right, now)
          : recordDecline(
            begun.right.attempt,
            begun.right.charge,
            charged.left as PaymentDeclined | PaymentRejected,
            now
          )))
    })

  return { complete }
}
