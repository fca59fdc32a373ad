/**
 * Settling a payment its request left pending (`docs/concurrency.md`, "When a process dies"), on
 * what the provider says of the key: `settleCharge` never charges, and closes a key with no charge,
 * so a stalled request cannot charge a session made payable again. A session already final gets no
 * order: a charge on it is logged for a refund.
 */
import { Effect, Either, Option } from "effect"
import { StorageError } from "../db/storage-error.ts"
import type { CheckoutContext } from "./checkout-context.ts"
import { completedWithNewOrder } from "./completed-with-order.ts"
import { paymentMessage, sessionTotal } from "./payment/decisions.ts"
import { reduce } from "./session/reducer.ts"
import { isActive, type Session, SessionCommand } from "./session/session.ts"
import { isExpiredAt } from "./session/view.ts"

/** Longer than any request spends from its step 1, which writes the session, to the end of its charge. */
export const PENDING_PAYMENT_GRACE_MILLIS = 10 * 60_000

/** `none`: settled by another request first, or written within the grace. */
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

  const settleLocked = Effect.fnUntraced(function*(id: string, now: number, ignoreGrace: boolean) {
    const locked = yield* store.lockSessionForPayment(id)
    if (Option.isNone(locked)) return "none"
    const { latestAttempt, session, version } = locked.value
    const attempt = Option.getOrUndefined(latestAttempt)
    if (attempt?.state !== "pending") return "none"
    if (!ignoreGrace && Date.parse(session.updated_at) + PENDING_PAYMENT_GRACE_MILLIS > now) return "none"
    const made = yield* payments.settleCharge(attempt)
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
   * `ignoreGrace`: settle now, when the provider has said the payment is final (its webhook): what
   * settles is still only what the provider says of the key.
   */
  const settlePendingPayment = (
    id: string,
    now: number,
    options: { readonly ignoreGrace?: boolean } = {}
  ): Effect.Effect<Settlement, StorageError> => store.transaction(settleLocked(id, now, options.ignoreGrace === true))

  return { settlePendingPayment }
}
