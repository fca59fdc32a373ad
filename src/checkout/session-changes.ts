/**
 * Reading and changing checkout sessions (every use case but completing): the domain reducer
 * applied to stored state at the Clock's time, each change one atomic store step or one
 * transaction under the session's lock.
 *
 * Create and an update that keeps the items are written optimistically (`writeOptimistically`):
 * the reducer runs without locks and one conditional store step writes its outcome; only when
 * that step finds what was decided on changed does the same decision run again under the locks.
 * Both keep the session they wrote for the next step of it (`CheckoutStoreService.written`), and
 * an update decides on that instead of reading it. Every other change locks first (and drops the
 * kept one).
 */
import { Clock, Effect, Either, Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer.ts"
import { type CheckoutContext, found } from "./checkout-context.ts"
import { makePaymentSettlement, PENDING_PAYMENT_GRACE_MILLIS } from "./payment-settlement.ts"
import { paymentPending, refuseWhilePaying } from "./payment/decisions.ts"
import { type PaymentInProgress, SessionNotFound } from "./session/errors.ts"
import { reduce } from "./session/reducer.ts"
import {
  ACTIVE_STATUSES,
  type CancelSessionInput,
  type CreateSessionInput,
  type ReducerError,
  type Session,
  SessionCommand,
  type SessionFinal,
  toCheckoutSession,
  type Transition,
  type UpdateSessionInput
} from "./session/session.ts"
import { isExpiredAt, view } from "./session/view.ts"
import { type Decided, writeOptimistically } from "./write-optimistically.ts"

/** A use case whose answer is the session it wrote. */
const answerSession = (session: Session) => Option.some(Either.right(session))

const uniqueProductIds = (...lists: ReadonlyArray<ReadonlyArray<{ readonly id: string }> | undefined>) =>
  [...new Set(lists.flatMap((list) => (list ?? []).map((item) => item.id)))].sort()

export const makeSessionChanges = (ctx: CheckoutContext) => {
  const { ids, store } = ctx
  const { settlePendingPayment } = makePaymentSettlement(ctx)

  /**
   * The reducer runs first with the stock `unchecked` (no lock held), then one store step locks
   * the stock rows, checks that each reservation fits and writes the session with them. When one
   * does not fit, the create runs again in a transaction with the stock locked and the reducer
   * given what is available, so the answer (`out_of_stock` with the first item that does not fit)
   * is the one the reducer gives.
   */
  const create = (request: CreateSessionInput): Effect.Effect<Session, ReducerError | StorageError> =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        Effect.flatMap(ids.make("cs_"), (id) =>
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

  /**
   * A session read past its deadline, as seen at `now`: read with its payment side, it shows as
   * stored while a payment is under way (begun before the deadline, it may still complete it: a
   * retry is answered "in progress", and the sweep completes or expires it once settled), else
   * as `view` shows it.
   */
  const pastDeadline = (id: string, now: number): Effect.Effect<Session, SessionNotFound | StorageError> =>
    Effect.map(
      found(id, store.readSessionForPayment(id)),
      ({ latestAttempt, session }) => paymentPending(latestAttempt) ? session : view(session, now)
    )

  /** The session at the Clock's time; its payment side is read only past its deadline (`pastDeadline`). */
  const get = Effect.fnUntraced(function*(id: string): Effect.fn.Return<Session, SessionNotFound | StorageError> {
    const now = yield* Clock.currentTimeMillis
    const session = yield* store.sessions.get(id)
    if (Option.isNone(session)) return yield* new SessionNotFound({ id })
    return isExpiredAt(session.value, now) ? yield* pastDeadline(id, now) : session.value
  })

  /**
   * `get` as the session's wire form in JSON text: the store's own serialization when the session
   * is within its deadline (one statement, nothing decoded), else what `pastDeadline` shows, serialized.
   */
  const getJson = (id: string): Effect.Effect<string, SessionNotFound | StorageError> =>
    Effect.flatMap(
      found(id, store.sessions.getJson(id)),
      (stored) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          isExpiredAt(stored, now)
            ? Effect.map(pastDeadline(id, now), (session) => JSON.stringify(toCheckoutSession(session)))
            : Effect.succeed(stored.json))
    )

  /** Runs the update on `session` (coupon redemptions read without locking). */
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
   * An update that keeps the items keeps their reservations (only their expiry follows the
   * session's), so it needs no stock lock: read the session with its version and its payment
   * side, reduce, write if unchanged (a refusal answers at once: it was true when read). An update
   * that changes the items locks the session and the stock of its old and new items. Either way a
   * session being paid is refused (`refuseWhilePaying`): every step 1 of completing writes the
   * session, so a payment begun after the read makes the write find the session changed, and the
   * update is decided again under the lock.
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

  /** Step of `cancel` under the session's lock. */
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

  /** Step of `update` that changes the items, under the session's and the stock's locks. */
  const updateItemsLocked = Effect.fnUntraced(function*(id: string, request: UpdateSessionInput, now: number) {
    const locked = yield* found(id, store.lockSessionForPayment(id))
    yield* refuseWhilePaying(locked)
    const { session } = locked
    const available = yield* store.inventory.lockStock(uniqueProductIds(session.items, request.items), now, id)
    const transition = yield* decideUpdate(session, request, now, available)
    yield* store.updateSessionAndReservations(transition)
    return transition.session
  })

  /** Cancels the session under its lock, unless it is final or being paid (`refuseWhilePaying`). */
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

  /** Step of `expireDue` in one transaction: the due sessions expired, those being paid set aside. */
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

  /**
   * Marks sessions idle past their TTL as expired and releases their stock, and settles payments
   * their requests left pending (`payment-settlement.ts`); returns how many sessions it
   * expired or settled. A due session with a payment pending is not expired in the batch but
   * settled after it, each such session in a transaction of its own, with those whose payment has
   * been pending longer than the grace (at most `limit` of them).
   */
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
    // A completion committed its order with its `order_create` event: it may go out now.
    if (completed) yield* ctx.orderEvents.queued
    return expired + settled
  })

  return { create, get, getJson, update, cancel, expireDue }
}
