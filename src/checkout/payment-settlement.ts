/**
 * Settling a payment its request left pending (`docs/concurrency.md`, "When a process dies"), on
 * what the provider says of the key: `settleCharge` never charges, and closes a key with no charge,
 * so a stalled request cannot charge a session made payable again. The provider is asked outside any
 * transaction (its calls may take seconds: no pooled connection, and on the embedded store no request,
 * waits on them); its answer is final for the key, so it is applied under the session's lock if the
 * same attempt is still pending, and otherwise another settlement or the request applied it first.
 * A session already final gets no order: a charge on it is logged for a refund.
 */
import { Effect, Either, Option } from "effect"
import { StorageError } from "../db/storage-error.ts"
import type { Charge, PaymentDeclined } from "../payments/model/payment.ts"
import type { CheckoutContext } from "./checkout-context.ts"
import { completedWithNewOrder } from "./completed-with-order.ts"
import { paymentMessage, sessionTotal } from "./payment/decisions.ts"
import { reduce } from "./session/reducer.ts"
import { isActive, type Session, SessionCommand } from "./session/session.ts"
import { isExpiredAt } from "./session/view.ts"

/** Longer than any request spends from its step 1, which writes the session, to the end of its charge. */
export const PENDING_PAYMENT_GRACE_MILLIS = 10 * 60_000

/** The provider's answer is the issuer asking for 3-D Secure (nothing charged). */
const asksAuthentication = (made: Option.Option<Either.Either<Charge, PaymentDeclined>>) =>
  Option.isSome(made) && Either.isLeft(made.value) && made.value.left.reason === "authentication_unavailable"

/** `none`: nothing pending, written within the grace, the provider cannot say yet, or settled by another first. */
export type Settlement = "completed" | "expired" | "payable" | "final" | "none"

export const makePaymentSettlement = (ctx: CheckoutContext) => {
  const { payments, store } = ctx

  const afterFailedPayment = Effect.fnUntraced(
    function*(session: Session, message: SessionCommand | undefined, now: number) {
      if (isExpiredAt(session, now)) {
        yield* store.updateSessionAndReservations(
          yield* Effect.orDie(reduce(session, SessionCommand.Expire(), ctx.reducerContext(now)))
        )
        return "expired" as const
      }
      if (message !== undefined) {
        yield* store.updateSessionAndReservations(
          yield* Effect.orDie(reduce(session, message, ctx.reducerContext(now)))
        )
      }
      return "payable" as const
    }
  )

  /** Under the session's lock: `made`, the provider's answer for the attempt `sequence`, if it is still pending. */
  const applyLocked = Effect.fnUntraced(function*(
    id: string,
    sequence: number,
    made: Option.Option<Either.Either<Charge, PaymentDeclined>>,
    now: number
  ) {
    const locked = yield* store.lockSessionForPayment(id)
    if (Option.isNone(locked)) return "none"
    const { latestAttempt, session, version } = locked.value
    const attempt = Option.getOrUndefined(latestAttempt)
    // Settled since the read (by another settlement or its request's own step 3): the same answer, applied once.
    if (attempt?.sequence !== sequence || attempt.state !== "pending") return "none"
    const charged = Option.isSome(made) && Either.isRight(made.value) ? made.value.right : undefined
    if (charged !== undefined && isActive(session.status)) {
      // The buyer paid, so the order is made even for a total changed since (only an older release
      // in a rolling deploy allows that).
      if (attempt.amount !== sessionTotal(session)) {
        yield* Effect.logError(
          `settled payment ${attempt.idempotencyKey}: charged ${attempt.amount} ${attempt.currency}, ` +
            `the session's total is now ${sessionTotal(session)}; reconcile the order`
        )
      }
      const { change, completed } = yield* Effect.orDie(completedWithNewOrder(ctx, session, now))
      const written = yield* store.completePaidCheckout({
        session: completed,
        version,
        attemptSequence: attempt.sequence,
        chargeId: charged.id,
        now,
        order: change
      })
      // Under the session's lock, at the version read: nothing else can have moved it.
      if (!written) {
        return yield* new StorageError({ reason: "failure", cause: new Error("a settled payment was not written") })
      }
      return "completed"
    }
    if (charged !== undefined) {
      yield* Effect.logError(
        `settled payment ${attempt.idempotencyKey}: charged ${attempt.amount} ${attempt.currency} ` +
          `for a session ${session.status}, with no order; refund it`
      )
    }
    yield* store.coupons.releaseHolds(id)
    yield* store.paymentAttempts.update(
      charged === undefined
        ? { ...attempt, state: "declined", updatedAt: now }
        : { ...attempt, state: "succeeded", chargeId: charged.id, updatedAt: now }
    )
    if (!isActive(session.status)) return "final"
    const declined = Option.isSome(made) && Either.isLeft(made.value)
      ? SessionCommand.RecordPaymentFailure({ message: paymentMessage(made.value.left) })
      : undefined
    return yield* afterFailedPayment(session, declined, now)
  })

  /**
   * Due on a read without the lock; the provider asked outside any transaction, then its answer applied
   * in one. Uninterruptible once asked, as a completion is: an answer is not lost to a client gone away.
   */
  const settle = Effect.fnUntraced(function*(id: string, now: number, grace: number) {
    const read = yield* store.readSessionForPayment(id)
    if (Option.isNone(read)) return "none"
    const attempt = Option.getOrUndefined(read.value.latestAttempt)
    if (attempt?.state !== "pending") return "none"
    if (Date.parse(read.value.session.updated_at) + grace > now) return "none"
    // Without the grace (a provider's own word), the attempt's request may still be running.
    const requestMayRun = grace < 0
    return yield* Effect.uninterruptible(
      Effect.flatMap(Effect.either(payments.settleCharge(attempt)), (settled) => {
        // The issuer asked for 3-D Secure: whether the session then waits for the agent's authentication or
        // is declined is the request's to say (its version and agent); a request gone is declined by the
        // sweep after the grace.
        if (requestMayRun && Either.isRight(settled) && asksAuthentication(settled.right)) {
          return Effect.succeed("none" as const)
        }
        if (Either.isRight(settled)) return store.transaction(applyLocked(id, attempt.sequence, settled.right, now))
        // The provider cannot say yet (still processing, or unreachable): a later settlement decides.
        return settled.left._tag === "PaymentPending" ? Effect.succeed("none" as const) : Effect.fail(settled.left)
      })
    )
  })

  const settlePendingPayment = (id: string, now: number): Effect.Effect<Settlement, StorageError> =>
    settle(id, now, PENDING_PAYMENT_GRACE_MILLIS)

  /**
   * Without the grace: for a provider that told the outcome itself (a webhook of a final payment). A request
   * still running for the attempt then finds it settled (`completion.ts` answers the completed session).
   */
  const settlePaymentNow = (id: string, now: number): Effect.Effect<Settlement, StorageError> =>
    settle(id, now, Number.NEGATIVE_INFINITY)

  return { settlePendingPayment, settlePaymentNow }
}
