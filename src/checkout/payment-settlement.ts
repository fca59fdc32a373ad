/**
 * Settling a payment its request left pending: the request died (a crash, a deploy) after step 1
 * of completing recorded the attempt, before or after the charge, and the agent never retried
 * (`docs/concurrency.md`, "When a process dies"). A retry would have resumed the attempt with its
 * key; without one, the buyer could be charged with no order, and the session could not be paid
 * with another credential.
 *
 * A session is settled once `PENDING_PAYMENT_GRACE_MILLIS` have passed since it was last written:
 * every request paying it writes it in step 1 (a new attempt with the session, a resumed one
 * re-priced), before its charge, so by then none can still be charging for it. One transaction
 * under the session's lock, in the completion's lock order (session, coupons, stock), decided on
 * what the provider says of the attempt's key (`settleCharge`, which never charges, and closes a
 * key under which no charge was made, so that a request still on its way to the charge cannot
 * charge for a session made payable again):
 *
 * - an approved charge: the session is completed with its order and `order_create` event, as the
 *   request would have completed it (one charge, one order; an error is logged when the session
 *   was written since to another total, which only a process of an earlier release does);
 * - a declined charge: recorded as a decline is (the session keeps the message, payable);
 * - no charge: the attempt is recorded declined, and the session is payable again;
 * - either way the coupon holds are given back, and a session past its expiry expires. The
 *   credential stays held by the session: its allowance names this session, whose next payment
 *   takes it as its own.
 *
 * A session already final with a payment pending (canceled or expired by a process of an earlier
 * release, which did not refuse changes while paying) gets no order: an approved charge is
 * recorded as the attempt's, with an error logged for the merchant to refund it; otherwise the
 * attempt is declined. Either way the sweep does not find it again.
 */
import { Effect, Either, Option } from "effect"
import { StorageError } from "../db/storage-error.ts"
import type { CheckoutContext } from "./checkout-context.ts"
import { completedWithNewOrder } from "./completed-with-order.ts"
import { paymentMessage, sessionTotal } from "./payment/decisions.ts"
import { reduce } from "./session/reducer.ts"
import { isActive, type Session, SessionCommand } from "./session/session.ts"
import { isExpiredAt } from "./session/view.ts"

/**
 * How long after a session's last write a payment still pending on it is settled: longer than
 * any request can spend between its step 1 and the end of its charge.
 */
export const PENDING_PAYMENT_GRACE_MILLIS = 10 * 60_000

/**
 * What settling did: the session completed, expired, left payable, the attempt of a session
 * already final settled, or nothing (settled by another request first, or written within the
 * grace).
 */
export type Settlement = "completed" | "expired" | "payable" | "final" | "none"

export const makePaymentSettlement = (ctx: CheckoutContext) => {
  const { payments, store } = ctx

  /** The session's state after a payment that did not go through, at `now`, written. */
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

  /** The settlement of `id`'s pending payment, in its transaction (`settlePendingPayment`). */
  const settleLocked = Effect.fnUntraced(function*(id: string, now: number) {
    const locked = yield* store.lockSessionForPayment(id)
    if (Option.isNone(locked)) return "none"
    const { latestAttempt, session, version } = locked.value
    const attempt = Option.getOrUndefined(latestAttempt)
    if (attempt?.state !== "pending") return "none"
    if (Date.parse(session.updated_at) + PENDING_PAYMENT_GRACE_MILLIS > now) return "none"
    const made = yield* payments.settleCharge(attempt)
    const charged = Option.isSome(made) && Either.isRight(made.value) ? made.value.right : undefined
    if (charged !== undefined && isActive(session.status)) {
      // Changes are refused while a payment is pending, but a process of an earlier release (in
      // a rolling deploy) did not refuse them: the buyer paid, so the order is made, and the
      // difference is told.
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
    // A session already final (see the module comment) stays as it is.
    if (!isActive(session.status)) return "final"
    const declined = Option.isSome(made) && Either.isLeft(made.value)
      ? SessionCommand.RecordPaymentFailure({ message: paymentMessage(made.value.left) })
      : undefined
    return yield* afterFailedPayment(session, declined, now)
  })

  /** Settles the pending payment of session `id` at `now` (see the module comment). */
  const settlePendingPayment = (id: string, now: number): Effect.Effect<Settlement, StorageError> =>
    store.transaction(settleLocked(id, now))

  return { settlePendingPayment }
}
