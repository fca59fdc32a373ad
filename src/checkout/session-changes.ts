/**
 * Reading and changing checkout sessions (every use case but completing). Create and an update that
 * keeps the items are written optimistically (`write-optimistically.ts`) and keep the session they
 * wrote (`CheckoutStoreService.written`); every other change locks first and drops it.
 */
import { Clock, Effect, Either, Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer.ts"
import { type CheckoutContext, found } from "./checkout-context.ts"
import { makePaymentSettlement, PENDING_PAYMENT_GRACE_MILLIS, type Settlement } from "./payment-settlement.ts"
import { paymentPending, refuseWhilePaying } from "./payment/decisions.ts"
import { type PaymentInProgress, SessionNotFound } from "./session/errors.ts"
import { reduce } from "./session/reducer.ts"
import {
  ACTIVE_STATUSES,
  type CancelSessionInput,
  type CreateSessionInput,
  type ReducerError,
  type Session,
  SESSION_ID_PREFIXES,
  SessionCommand,
  type SessionFinal,
  toCheckoutSession,
  type Transition,
  type UpdateSessionInput
} from "./session/session.ts"
import { isExpiredAt, view } from "./session/view.ts"
import { type Decided, writeOptimistically } from "./write-optimistically.ts"

const answerSession = (session: Session) => Option.some(Either.right(session))

const uniqueProductIds = (...lists: ReadonlyArray<ReadonlyArray<{ readonly id: string }> | undefined>) =>
  [...new Set(lists.flatMap((list) => (list ?? []).map((item) => item.id)))].sort()

export const makeSessionChanges = (ctx: CheckoutContext) => {
  const { ids, store } = ctx
  const { settlePaymentNow, settlePendingPayment } = makePaymentSettlement(ctx)

  /** The stock is `unchecked` first; if a reservation does not fit, the locked retry answers as the reducer does. */
  const create = (request: CreateSessionInput): Effect.Effect<Session, ReducerError | StorageError> =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        Effect.flatMap(ids.make(SESSION_ID_PREFIXES[request.protocol ?? "acp"]), (id) =>
          Effect.flatMap(ctx.couponUsage(request.discounts?.codes ?? [], now, id, false), (redemptions) =>
            writeOptimistically(store, {
              read: Effect.succeed<ReadonlyMap<string, number> | "unchecked">("unchecked"),
              locked: Effect.suspend(() =>
                store.inventory.lockStock(uniqueProductIds(request.items), now, id)
              )
            }, (available) =>
              Effect.map(
                reduce(
                  undefined,
                  SessionCommand.Create({ id, request }),
                  ctx.reducerContext(now, available, redemptions)
                ),
                (transition): Decided<Session> => ({
                  value: transition.session,
                  write: (answer) =>
                    store.createSessionReservingStock(transition, now, answer),
                  keep: { session: transition.session, version: 1, latestAttempt: Option.none(), couponHolds: [] }
                })
              ))))
    )

  /** Past its deadline a session shows as stored while a payment, begun before it, may still complete it. */
  const pastDeadline = (id: string, now: number): Effect.Effect<Session, SessionNotFound | StorageError> =>
    Effect.map(
      found(id, store.readSessionForPayment(id)),
      ({ latestAttempt, session }) => paymentPending(latestAttempt) ? session : view(session, now)
    )

  const get = Effect.fnUntraced(function*(id: string): Effect.fn.Return<Session, SessionNotFound | StorageError> {
    const now = yield* Clock.currentTimeMillis
    const session = yield* store.sessions.get(id)
    if (Option.isNone(session)) return yield* new SessionNotFound({ id })
    return isExpiredAt(session.value, now) ? yield* pastDeadline(id, now) : session.value
  })

  const getJson = (id: string): Effect.Effect<string, SessionNotFound | StorageError> =>
    Effect.flatMap(
      found(id, store.sessions.getJson(id)),
      (stored) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          isExpiredAt(stored, now)
            ? Effect.map(pastDeadline(id, now), (session) => JSON.stringify(toCheckoutSession(session)))
            : Effect.succeed(stored.json))
    )

  /** Coupon redemptions are read without locking. */
  const decideUpdate = (
    session: Session,
    request: UpdateSessionInput,
    now: number,
    available?: ReadonlyMap<string, number>
  ) =>
    Effect.flatMap(
      ctx.couponUsage(request.discounts?.codes ?? session.discounts?.codes ?? [], now, session.id, false),
      (redemptions) =>
        reduce(session, SessionCommand.Update({ request }), ctx.reducerContext(now, available, redemptions))
    )

  /**
   * Keeping the items needs no stock lock. A session being paid is refused either way: every step 1
   * writes the session, so a payment begun after the read sends the update under the lock.
   */
  const update = Effect.fnUntraced(function*(
    id: string,
    request: UpdateSessionInput
  ): Effect.fn.Return<Session, ReducerError | PaymentInProgress | SessionNotFound | StorageError> {
    const now = yield* Clock.currentTimeMillis
    // Taken either way: a change of the items, under the lock, leaves none behind.
    const known = store.written.take(id)
    if (request.items === undefined) {
      return yield* writeOptimistically(store, {
        known,
        read: found(id, store.readSessionForPayment(id)),
        locked: found(id, store.lockSessionForPayment(id))
      }, (snapshot) =>
        Effect.zipRight(
          refuseWhilePaying(snapshot),
          Effect.map(decideUpdate(snapshot.session, request, now), ({ session }): Decided<Session> => ({
            value: session,
            write: (answer) => store.updateSessionKeepingItems(session, snapshot.version, answer),
            // Keeping the items changes neither the attempts nor the coupon holds.
            keep: { ...snapshot, session, version: snapshot.version + 1 }
          }))
        ))
    }
    return yield* commitWithAnswer(
      store.transaction,
      updateItemsLocked(id, request, now),
      answerSession
    )
  })

  const cancelLocked = Effect.fnUntraced(function*(id: string, request: CancelSessionInput, now: number) {
    const locked = yield* found(id, store.lockSessionForPayment(id))
    yield* refuseWhilePaying(locked)
    const { session } = locked
    const transition = yield* reduce(
      session,
      SessionCommand.Cancel({ details: request.details }),
      ctx.reducerContext(now)
    ).pipe(
      Effect.catchIf((error) => error._tag !== "SessionFinal", Effect.die)
    ) as Effect.Effect<Transition, SessionFinal>
    yield* store.updateSessionAndReservations(transition)
    return transition.session
  })

  const updateItemsLocked = Effect.fnUntraced(function*(id: string, request: UpdateSessionInput, now: number) {
    const locked = yield* found(id, store.lockSessionForPayment(id))
    yield* refuseWhilePaying(locked)
    const { session } = locked
    const available = yield* store.inventory.lockStock(uniqueProductIds(session.items, request.items), now, id)
    const transition = yield* decideUpdate(session, request, now, available)
    yield* store.updateSessionAndReservations(transition)
    return transition.session
  })

  const cancel = Effect.fnUntraced(function*(
    id: string,
    request: CancelSessionInput = {}
  ): Effect.fn.Return<Session, SessionFinal | PaymentInProgress | SessionNotFound | StorageError> {
    const now = yield* Clock.currentTimeMillis
    store.written.take(id)
    return yield* commitWithAnswer(
      store.transaction,
      cancelLocked(id, request, now),
      answerSession
    )
  })

  const expireBatch = Effect.fnUntraced(function*(now: number, limit: number) {
    const due = yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, limit)
    let expired = 0
    const beingPaid: Array<string> = []
    for (const id of due) {
      const locked = yield* store.lockSessionForPayment(id)
      if (Option.isNone(locked)) continue
      if (paymentPending(locked.value.latestAttempt)) {
        beingPaid.push(id)
        continue
      }
      const transition = yield* reduce(locked.value.session, SessionCommand.Expire(), ctx.reducerContext(now)).pipe(
        Effect.orDie
      )
      if (transition.session.status === "expired") {
        yield* store.updateSessionAndReservations(transition)
        expired++
      }
    }
    return { beingPaid, expired }
  })

  /** A due session with a payment pending is settled instead, each in a transaction of its own. */
  const expireDue = Effect.fnUntraced(function*(limit: number): Effect.fn.Return<number, StorageError> {
    const now = yield* Clock.currentTimeMillis
    const { beingPaid, expired } = yield* store.transaction(expireBatch(now, limit))
    const stale = yield* store.sessionsWithPaymentPendingSince(now - PENDING_PAYMENT_GRACE_MILLIS, limit)
    let settled = 0
    let completed = false
    for (const id of new Set([...beingPaid, ...stale])) {
      const settlement = yield* settlePendingPayment(id, now)
      if (settlement !== "none") settled++
      if (settlement === "completed") completed = true
    }
    // Only once the orders and their events committed.
    if (completed) yield* ctx.orderEvents.queued
    return expired + settled
  })

  const settlePayment = Effect.fnUntraced(function*(id: string): Effect.fn.Return<Settlement, StorageError> {
    const settlement = yield* settlePaymentNow(id, yield* Clock.currentTimeMillis)
    // Only once the order and its event committed.
    if (settlement === "completed") yield* ctx.orderEvents.queued
    return settlement
  })

  return { create, get, getJson, update, cancel, expireDue, settlePayment }
}
