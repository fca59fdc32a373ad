/**
 * Settling a payment its request left pending: the request died (a crash, a deploy) after step 1
 * of completing recorded the attempt, before or after the charge, and the agent never retried
 * (`docs/concurrency.md`, "When a process dies"). A retry would have resumed the attempt with its
 * key; without one, the session would expire with the buyer charged and no order.
 *
 * The expiry sweep settles a session due to expire whose latest attempt is still pending, once
 * `PENDING_PAYMENT_GRACE_MILLIS` have passed since its expiry: a request can pay a session only
 * before it expires, so by then none can still be charging for it. Until then the session is
 * left as it is (neither expired nor settled). One transaction under the session's lock, in the
 * completion's lock order (session, coupons, stock), decided on what the provider says of the
 * attempt's key (`chargeMadeUnder`, which never charges):
 *
 * - an approved charge: the session is completed with its order and `order_create` event, as the
 *   request would have completed it (one charge, one order);
 * - a declined charge, or none: the attempt is recorded declined, the coupon holds given back, and
 *   the session expires as any other. The credential stays held by the session: its allowance
 *   names this session, which is ending, so it can pay for nothing else.
 */
import { Effect, Either, Option } from "effect"
import { StorageError } from "../db/storage-error.ts"
import { newOrderSummary } from "./checkout-completion-service.ts"
import type { CheckoutContext } from "./checkout-context-service.ts"
import { isActive, SessionCommand } from "./session-model.ts"
import { reduce } from "./session-reducer.ts"

/**
 * How long after a session's expiry its pending payment is settled: longer than any request can
 * spend between step 1 of completing (before the expiry) and the end of its charge.
 */
export const PENDING_PAYMENT_GRACE_MILLIS = 10 * 60_000

/**
 * What settling did: the session completed, expired, or neither (settled by another request
 * first, or still within the grace).
 */
export type Settlement = "completed" | "expired" | "none"

export const makePaymentSettlement = (ctx: CheckoutContext) => {
  const { payments, store } = ctx

  /** Settles the pending payment of session `id` at `now` (see the module comment). */
  const settlePendingPayment = (id: string, now: number): Effect.Effect<Settlement, StorageError> =>
    store.transaction(Effect.gen(function*() {
      const locked = yield* store.lockSessionForPayment(id)
      if (Option.isNone(locked)) return "none"
      const { latestAttempt, session, version } = locked.value
      const attempt = Option.getOrUndefined(latestAttempt)
      if (attempt?.state !== "pending" || !isActive(session.status)) return "none"
      if (Date.parse(session.expires_at) + PENDING_PAYMENT_GRACE_MILLIS > now) return "none"
      const made = yield* payments.chargeMadeUnder(attempt.idempotencyKey)
      if (Option.isSome(made) && Either.isRight(made.value)) {
        const order = yield* newOrderSummary(ctx, id)
        const completed = (yield* Effect.orDie(
          reduce(session, SessionCommand.MarkCompleted({ order }), ctx.reducerContext(now))
        )).session
        const written = yield* store.completePaidCheckout({
          session: { ...completed, order },
          version,
          attemptSequence: attempt.sequence,
          chargeId: made.value.right.id,
          now,
          order: yield* ctx.orderEvents.orderCreated({ order, session: completed })
        })
        // Under the session's lock, at the version read: nothing else can have moved it.
        if (!written) {
          return yield* new StorageError({ reason: "failure", cause: new Error("a settled payment was not written") })
        }
        return "completed"
      }
      yield* store.coupons.releaseHolds(id)
      yield* store.paymentAttempts.update({ ...attempt, state: "declined", updatedAt: now })
      const expiring = yield* Effect.orDie(reduce(session, SessionCommand.Expire(), ctx.reducerContext(now)))
      yield* store.updateSessionAndReservations(expiring)
      return "expired"
    }))

  return { settlePendingPayment }
}
