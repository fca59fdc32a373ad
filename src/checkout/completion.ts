/**
 * Completing a checkout: step 1 records the attempt (`beginUnlocked` for the usual payment, else
 * `beginPayment` under the session's lock, both as `decideBegin` decides), step 2 charges outside
 * any transaction under the attempt's key, step 3 completes (`completePaid`) or records the decline.
 * One charge at most, and a charged session always gets its order: `docs/concurrency.md`, "Completing".
 */
import { Clock, Effect, Either, Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer.ts"
import {
  type AuthenticationRequired,
  type Charge,
  type ChargeRequest,
  type PaymentCredential,
  PaymentDeclined,
  type PaymentPending,
  type PaymentRejected
} from "../payments/model/payment.ts"
import { type CheckoutContext, found } from "./checkout-context.ts"
import type { SessionForPayment } from "./checkout-store.ts"
import { completedWithNewOrder } from "./completed-with-order.ts"
import { type PaymentAttempt } from "./payment/attempt.ts"
import {
  authenticationUnavailable,
  canAuthenticate,
  decideBegin,
  paymentMessage,
  resolveCredential
} from "./payment/decisions.ts"
import { relevantCoupons } from "./pricing/discounts.ts"
import type { InvalidPaymentData } from "./session/errors.ts"
import { PaymentInProgress, type SessionNotFound } from "./session/errors.ts"
import { reduce } from "./session/reducer.ts"
import {
  type CompleteSessionInput,
  type DiscountUnavailable,
  type PriceChanged,
  type ReducerError,
  type Session,
  SessionCommand,
  SessionFinal
} from "./session/session.ts"
import { holdsUntil } from "./session/view.ts"
import { type Decided, writeOptimistically } from "./write-optimistically.ts"

export type CompleteError =
  | ReducerError
  | PaymentInProgress
  | SessionNotFound
  | InvalidPaymentData
  | PaymentDeclined
  | PaymentRejected
  | PaymentPending
  | StorageError

type Begun =
  | {
    readonly _tag: "Charge"
    readonly attempt: PaymentAttempt
    readonly charge: ChargeRequest
    readonly paying: Session
    readonly version: number
    /** This request began the attempt (its step 1 wrote it), rather than resuming it. */
    readonly began: boolean
  }
  | { readonly _tag: "AuthenticationRequired"; readonly session: Session }

type BeginFailure = DiscountUnavailable | PriceChanged | PaymentDeclined | PaymentRejected

type Charging = Extract<Begun, { readonly _tag: "Charge" }>

export const makeCheckoutCompletion = (ctx: CheckoutContext) => {
  const { payments, store } = ctx
  const lockForPayment = (id: string) => found(id, store.lockSessionForPayment(id))

  /** The session records why and stays payable. */
  const refusePayment = Effect.fnUntraced(function*(
    paying: Session,
    started: number,
    failure: PaymentDeclined | PaymentRejected
  ) {
    const failed = yield* reduce(
      paying,
      SessionCommand.RecordPaymentFailure({ message: paymentMessage(failure) }),
      ctx.reducerContext(started)
    )
    yield* store.updateSessionAndReservations(failed)
    return Either.left<BeginFailure>(failure)
  })

  const beginLocked = Effect.fnUntraced(
    function*(id: string, request: CompleteSessionInput, credential: PaymentCredential, started: number) {
      const snapshot = yield* lockForPayment(id)
      const redemptions = yield* ctx.couponUsage(snapshot.session.discounts?.codes ?? [], started, id, true)
      const decision = yield* decideBegin(
        snapshot,
        request,
        credential,
        started,
        (pricedAt) => ctx.reducerContext(started, new Map(), redemptions, pricedAt)
      )
      if (decision._tag === "Reprice") {
        yield* store.sessions.update(decision.failure.session)
        return Either.left<BeginFailure>(decision.failure)
      }
      if (decision._tag === "Refuse") return yield* refusePayment(decision.paying, started, decision.failure)
      const { attempt, charge, isNew, paying } = decision
      const refuse = (failure: PaymentDeclined | PaymentRejected) => refusePayment(paying, started, failure)
      const authorized = yield* Effect.either(payments.authorize(charge))
      if (Either.isLeft(authorized)) {
        const failure = authorized.left
        if (failure._tag === "StorageError") return yield* failure
        // A resumed attempt may have been charged, or be another request's authenticated payment.
        if (!isNew) return yield* new PaymentInProgress({ sessionId: id })
        if (failure._tag !== "AuthenticationRequired") return yield* refuse(failure)
        if (!canAuthenticate(request, paying)) {
          return yield* refuse(
            new PaymentDeclined({ reason: "authentication_unavailable", message: authenticationUnavailable(request) })
          )
        }
        const required = yield* reduce(
          paying,
          SessionCommand.RequireAuthentication({ request: failure.request }),
          ctx.reducerContext(started)
        )
        yield* store.updateSessionAndReservations(required)
        return Either.right<Begun>({ _tag: "AuthenticationRequired", session: required.session })
      }
      const held = (paying.discounts?.applied ?? []).map((applied) => applied.coupon.id)
      if (held.length > 0 || snapshot.couponHolds.length > 0) yield* store.coupons.hold(id, held, holdsUntil(paying))
      const version = isNew ? yield* store.startPaymentAttempt(paying, attempt) : yield* store.sessions.update(paying)
      return Either.right<Begun>({ _tag: "Charge", attempt, charge, paying, version, began: isNew })
    }
  )

  /** Step 1 under the lock; the request's buyer is stored whatever the payment's outcome. */
  const beginPayment = (
    id: string,
    request: CompleteSessionInput,
    credential: PaymentCredential,
    started: number
  ) =>
    commitWithAnswer(
      store.transaction,
      beginLocked(id, request, credential, started),
      (begun) =>
        Either.isLeft(begun)
          ? Option.some(Either.left(begun.left))
          : begun.right._tag === "AuthenticationRequired"
          ? Option.some(Either.right(begun.right.session))
          : Option.none()
    )

  /**
   * Step 1 without the lock: a new attempt, no coupon, no authentication result; anything else is
   * none, left to `beginPayment`. A credential it leaves held can pay only this session: nothing to undo.
   */
  const beginUnlocked = (
    id: string,
    request: CompleteSessionInput,
    credential: PaymentCredential,
    started: number,
    known: SessionForPayment | undefined
  ): Effect.Effect<Option.Option<Charging>, StorageError> => {
    const none = Option.none<Charging>()
    if (request.authentication_result !== undefined) return Effect.succeed(none)
    const onRead = Effect.flatMap(
      store.readSessionForPayment(id),
      (read) => (Option.isNone(read) ? Effect.succeed(none) : beginOn(read.value, request, credential, started))
    )
    if (known === undefined) return onRead
    // `known` may be stale: what does not go through is tried on a read.
    return Effect.flatMap(
      beginOn(known, request, credential, started),
      (begun) => (Option.isSome(begun) ? Effect.succeed(begun) : onRead)
    )
  }

  const beginOn = Effect.fnUntraced(function*(
    snapshot: SessionForPayment,
    request: CompleteSessionInput,
    credential: PaymentCredential,
    started: number
  ) {
    const none = Option.none<Charging>()
    // Coupons are counted under their rows' locks.
    const coupons = relevantCoupons(ctx.catalog.coupons, snapshot.session.discounts?.codes ?? [])
    if (snapshot.couponHolds.length > 0 || coupons.length > 0) return none
    const decided = decideBegin(
      snapshot,
      request,
      credential,
      started,
      (pricedAt) => ctx.reducerContext(started, new Map(), new Map(), pricedAt)
    )
    if (Either.isLeft(decided) || decided.right._tag !== "Pay" || !decided.right.isNew) return none
    const { attempt, charge, paying } = decided.right
    const authorized = yield* Effect.either(payments.authorize(charge))
    if (Either.isLeft(authorized)) return authorized.left._tag === "StorageError" ? yield* authorized.left : none
    const written = yield* store.startPaymentAttemptAt(paying, attempt, snapshot.version)
    return Option.map(
      written,
      (version): Charging => ({ _tag: "Charge", attempt, charge, paying, version, began: true })
    )
  })

  const completeOn = Effect.fnUntraced(function*(
    { latestAttempt, session, version }: SessionForPayment,
    attempt: PaymentAttempt,
    now: number,
    settledAt: number | undefined
  ) {
    const current = Option.getOrUndefined(latestAttempt)
    // The provider's webhook settled this request's own attempt first (`settlePayment`): its order is
    // the answer. Only then is the session one write past step 1's (a request resuming the attempt
    // writes it in its own step 1), so a concurrent complete keeps its 409 `session_completed`.
    if (
      current?.sequence === attempt.sequence && current.state === "succeeded" && session.status === "completed" &&
      version === settledAt
    ) {
      return { change: undefined, completed: session }
    }
    if (current?.sequence !== attempt.sequence || current.state !== "pending") {
      return yield* session.status === "completed"
        ? Effect.fail(new SessionFinal({ status: "completed", command: "complete" }))
        : Effect.fail(new PaymentInProgress({ sessionId: session.id }))
    }
    return yield* completedWithNewOrder(ctx, session, now)
  })

  /** Step 3 after a charge: on the session as step 1 wrote it, else under the lock (`writeOptimistically`). */
  const completePaid = (
    paid: {
      readonly attempt: PaymentAttempt
      readonly paying: Session
      readonly version: number
      readonly began: boolean
    },
    charged: Charge,
    now: number
  ) =>
    writeOptimistically(store, {
      read: Effect.succeed<SessionForPayment>({
        session: paid.paying,
        version: paid.version,
        latestAttempt: Option.some(paid.attempt),
        couponHolds: []
      }),
      locked: lockForPayment(paid.attempt.sessionId)
    }, (snapshot) =>
      Effect.map(
        completeOn(snapshot, paid.attempt, now, paid.began ? paid.version + 1 : undefined),
        ({ change, completed }): Decided<Session> => ({
          value: completed,
          write: (answer) =>
            change === undefined ? Effect.succeed(true) : store.completePaidCheckout({
              session: completed,
              version: snapshot.version,
              attemptSequence: paid.attempt.sequence,
              chargeId: charged.id,
              now,
              order: change
            }, answer)
        })
      )).pipe(
        // Only once the order and its event committed.
        Effect.tap(() => ctx.orderEvents.queued)
      )

  const declineLocked = Effect.fnUntraced(
    function*(attempt: PaymentAttempt, charge: ChargeRequest, failure: PaymentDeclined | PaymentRejected, now: number) {
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
    }
  )

  /**
   * Step 3 after the provider learned at the charge that the issuer wants 3-D Secure (nothing charged,
   * nothing chargeable under the key): the attempt ends as a decline would, and the session waits for
   * the agent's result, or, where the request's version or agent cannot authenticate, is declined.
   */
  const authenticationLocked = Effect.fnUntraced(
    function*(attempt: PaymentAttempt, charge: ChargeRequest, required: AuthenticationRequired, now: number) {
      const { latestAttempt, session } = yield* lockForPayment(attempt.sessionId)
      const current = Option.getOrUndefined(latestAttempt)
      if (current?.sequence !== attempt.sequence || current.state !== "pending") {
        if (session.status === "completed") {
          return yield* new SessionFinal({ status: "completed", command: "complete" })
        }
        // A request of the same attempt recorded it first.
        if (current?.state === "declined" && session.status === "authentication_required") return session
        return yield* new PaymentInProgress({ sessionId: session.id })
      }
      yield* payments.release(charge)
      yield* store.coupons.releaseHolds(session.id)
      yield* store.paymentAttempts.update({ ...attempt, state: "declined", updatedAt: now })
      const waiting = yield* reduce(
        session,
        SessionCommand.RequireAuthentication({ request: required.request }),
        ctx.reducerContext(now)
      )
      yield* store.updateSessionAndReservations(waiting)
      return waiting.session
    }
  )

  const recordAuthenticationRequired = (
    paid: Charging,
    request: CompleteSessionInput,
    required: AuthenticationRequired,
    now: number
  ) =>
    canAuthenticate(request, paid.paying)
      ? commitWithAnswer(
        store.transaction,
        authenticationLocked(paid.attempt, paid.charge, required, now),
        (session) => Option.some(Either.right(session))
      )
      : recordDecline(
        paid.attempt,
        paid.charge,
        new PaymentDeclined({
          reason: "authentication_unavailable",
          message: authenticationUnavailable(request),
          declineCode: "authentication_required"
        }),
        now
      )

  /** Step 3 after a decline: the credential and coupon holds given back, the session payable; fails with it. */
  const recordDecline = (
    attempt: PaymentAttempt,
    charge: ChargeRequest,
    failure: PaymentDeclined | PaymentRejected,
    now: number
  ) =>
    Effect.flatMap(
      commitWithAnswer(
        store.transaction,
        declineLocked(attempt, charge, failure, now),
        (declined) => Option.some(Either.left(declined))
      ),
      Effect.fail
    )

  /** A retry after a crash reuses the pending attempt and its key: the provider returns the first charge. */
  const complete = Effect.fnUntraced(
    function*(id: string, request: CompleteSessionInput): Effect.fn.Return<Session, CompleteError> {
      const credential = yield* resolveCredential(request.payment_data, ctx.catalog)
      const started = yield* Clock.currentTimeMillis
      const unlocked = yield* beginUnlocked(id, request, credential, started, store.written.take(id))
      const begun = Option.isSome(unlocked)
        ? Either.right<Begun>(unlocked.value)
        : yield* beginPayment(id, request, credential, started)
      if (Either.isLeft(begun)) return yield* begun.left
      const paid = begun.right
      if (paid._tag === "AuthenticationRequired") return paid.session
      const charged = yield* Effect.either(payments.charge(paid.charge))
      // Not decided by the provider: the attempt stays pending for a retry (same key) or the settlement.
      if (Either.isLeft(charged) && (charged.left._tag === "StorageError" || charged.left._tag === "PaymentPending")) {
        return yield* charged.left
      }
      // Uninterruptible: the charge's outcome is stored even when the client goes away.
      return yield* Effect.uninterruptible(Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (Either.isRight(charged)) return completePaid(paid, charged.right, now)
        const failure = charged.left as PaymentDeclined | PaymentRejected | AuthenticationRequired
        return failure._tag === "AuthenticationRequired"
          ? recordAuthenticationRequired(paid, request, failure, now)
          : recordDecline(paid.attempt, paid.charge, failure, now)
      }))
    }
  )

  return { complete }
}
