/**
 * Checkout sessions: the domain reducer applied to stored state, one transaction per change.
 *
 * Each operation reads what the reducer needs (the session, locked; the stock available to it,
 * locked), runs the pure reducer at the Clock's time, then writes the new session, its
 * reservations and, on completion, the order — all in the same transaction. Three are single
 * atomic store steps in the usual case instead, the reducer run first: create (one step checks
 * the stock and writes, see `create`), an update that keeps the items (written if the session is
 * unchanged since it was read) and the completion of a paid session (written if unchanged since
 * the payment began, see `completePaid`).
 */
import { Clock, Context, Data, Effect, Either, Layer, Option } from "effect"
import type { CatalogSnapshot } from "../catalog/catalog.ts"
import type {
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  MessageError,
  OrderSummary,
  PaymentData
} from "./checkout-schemas.ts"
import { relevantCoupons } from "./discounts.ts"
import { reduce } from "./session-reducer.ts"
import { isExpiredAt, view } from "./session-view.ts"
import {
  type ReducerContext,
  type ReducerError,
  type Session,
  type DiscountUnavailable,
  SessionFinal,
  SessionCommand,
  toCheckoutSession,
  type Transition
} from "./session-model.ts"
import { CheckoutStore, type PaymentAttempt } from "./checkout-store.ts"
import { type StorageError } from "../db/storage-error.ts"
import { Catalog } from "../catalog/catalog-service.ts"
import { AppConfig } from "../platform/config.ts"
import { Ids } from "../platform/ids.ts"
import { OrderEvents } from "../orders/order-service.ts"
import {
  type Charge,
  type ChargeRequest,
  credentialRef,
  type PaymentCredential,
  type PaymentDeclined,
  PaymentProvider,
  type PaymentRejected
} from "../payments/payment-provider.ts"
import { BUILTIN_PROVIDER_ALIASES } from "../payments/builtin-payment-processor.ts"

export class SessionNotFound extends Data.TaggedError("SessionNotFound")<{ readonly id: string }> {}

/** `payment_data` names a handler or provider this merchant does not offer → 400 invalid. */
export class InvalidPaymentData extends Data.TaggedError("InvalidPaymentData")<{
  readonly param: string
  readonly message: string
}> {}

/**
 * Another payment of this session is under way (a concurrent complete with another credential,
 * or one whose outcome is not stored yet) → 409 idempotency_in_flight; retry shortly.
 */
export class PaymentInProgress extends Data.TaggedError("PaymentInProgress")<{ readonly sessionId: string }> {}

export type CompleteError =
  | ReducerError
  | PaymentInProgress
  | SessionNotFound
  | InvalidPaymentData
  | PaymentDeclined
  | PaymentRejected
  | StorageError

export interface CheckoutServiceShape {
  readonly create: (request: CheckoutSessionCreateRequest) => Effect.Effect<Session, ReducerError | StorageError>
  readonly get: (id: string) => Effect.Effect<Session, SessionNotFound | StorageError>
  /**
   * `get`, answered as the session's wire form in JSON text: the store's own serialization when
   * the session shows as stored (one statement, nothing decoded), the view of `get` serialized
   * when it must show expired.
   */
  readonly getJson: (id: string) => Effect.Effect<string, SessionNotFound | StorageError>
  readonly update: (
    id: string,
    request: CheckoutSessionUpdateRequest
  ) => Effect.Effect<Session, ReducerError | SessionNotFound | StorageError>
  readonly complete: (
    id: string,
    request: CheckoutSessionCompleteRequest
  ) => Effect.Effect<Session & { readonly order: OrderSummary }, CompleteError>
  readonly cancel: (id: string) => Effect.Effect<Session, SessionFinal | SessionNotFound | StorageError>
  /** Marks sessions idle past their TTL as expired and releases their stock; returns how many. */
  readonly expireDue: (limit: number) => Effect.Effect<number, StorageError>
}

export class CheckoutService extends Context.Tag("acp/CheckoutService")<CheckoutService, CheckoutServiceShape>() {}

const uniqueProductIds = (...lists: ReadonlyArray<ReadonlyArray<{ readonly id: string }> | undefined>) =>
  [...new Set(lists.flatMap((list) => (list ?? []).map((item) => item.id)))].sort()

/** The credential of a complete request, checked against the payment handlers of the catalog. */
export const resolveCredential = (
  paymentData: PaymentData,
  catalog: CatalogSnapshot
): Either.Either<PaymentCredential, InvalidPaymentData> => {
  if ("handler_id" in paymentData) {
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
  const providers = [...new Set([...catalog.paymentHandlers.map((handler) => handler.psp), ...BUILTIN_PROVIDER_ALIASES])]
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

export const CheckoutServiceLive = Layer.effect(
  CheckoutService,
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const catalog = yield* Catalog
    const config = yield* AppConfig
    const ids = yield* Ids
    const payments = yield* PaymentProvider
    const orderEvents = yield* OrderEvents
    // The catalog file seeds stock for products the database does not know yet.
    yield* store.seedStock([...catalog.products.values()].map((product) => ({ id: product.id, stock: product.stock })))
    // Likewise the coupons' redemption counts (discount extension).
    yield* store.seedCoupons(catalog.coupons.map((coupon) => ({ id: coupon.id, timesRedeemed: coupon.times_redeemed ?? 0 })))

    const context = (
      now: number,
      available: ReadonlyMap<string, number> = new Map(),
      redemptions?: ReadonlyMap<string, number>
    ): ReducerContext => ({
      catalog,
      now,
      sessionTtlSeconds: config.sessionTtlSeconds,
      available,
      redemptions
    })

    /** Redemptions of the coupons `codes` name and of the automatic ones (locked when completing). */
    const couponUsage = (codes: ReadonlyArray<string>, now: number, sessionId: string, lock: boolean) => {
      const ids = relevantCoupons(catalog.coupons, codes).map((coupon) => coupon.id)
      return ids.length === 0 ? Effect.succeed(new Map<string, number>()) : store.couponUsage(ids, now, sessionId, lock)
    }

    /** What a store read found, or `SessionNotFound`. */
    const found = <A, E>(id: string, read: Effect.Effect<Option.Option<A>, E>) =>
      Effect.flatMap(read, Option.match({ onNone: () => Effect.fail(new SessionNotFound({ id })), onSome: Effect.succeed }))

    const lockExisting = (id: string) => found(id, store.lockSession(id))

    /** `lockExisting` for a payment step: with the latest attempt and the coupon holds. */
    const lockForPayment = (id: string) => found(id, store.lockSessionForPayment(id))

    /** Writes a transition of an existing session: the session row and its reservations. */
    const save = (transition: Transition) =>
      Effect.zipRight(
        store.updateSession(transition.session),
        transition.reservations.size === 0
          ? store.releaseReservations(transition.session.id)
          : store.setReservations(
            transition.session.id,
            transition.reservations,
            Date.parse(transition.session.expires_at)
          )
      )

    /**
     * Creating is one atomic store step in the usual case: the reducer runs first as if every
     * product were in stock, then `insertSessionIfAvailable` locks the stock rows, checks that each
     * reservation fits and writes the session with them — no stock lock is held while the
     * reducer runs or between round trips. When a reservation does not fit (or the reducer
     * refuses the request for any reason), the create runs again the exact way, in a transaction:
     * stock locked, the reducer given what is available, so the answer (e.g. `out_of_stock` with
     * the first item that does not fit) is the same as it would have been.
     */
    const create: CheckoutServiceShape["create"] = (request) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const id = yield* ids.make("cs_")
        const productIds = uniqueProductIds(request.items)
        const redemptions = yield* couponUsage(request.discounts?.codes ?? [], now, id, false)
        const command = SessionCommand.Create({ id, request })
        const unlimited = new Map(productIds.map((productId) => [productId, Number.MAX_SAFE_INTEGER]))
        const optimistic = reduce(undefined, command, context(now, unlimited, redemptions))
        if (Either.isRight(optimistic)) {
          const { reservations, session } = optimistic.right
          const outcome = yield* store.insertSessionIfAvailable(session, reservations, Date.parse(session.expires_at), now)
          if (outcome.inserted) return session
        }
        return yield* store.transaction(Effect.gen(function*() {
          const available = yield* store.lockStock(productIds, now, id)
          const transition = yield* reduce(undefined, command, context(now, available, redemptions))
          yield* store.insertSession(transition.session)
          yield* store.setReservations(id, transition.reservations, Date.parse(transition.session.expires_at))
          return transition.session
        }))
      })

    const get: CheckoutServiceShape["get"] = (id) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const session = yield* store.getSession(id)
        if (Option.isNone(session)) return yield* new SessionNotFound({ id })
        return view(session.value, now)
      })

    const getJson: CheckoutServiceShape["getJson"] = (id) =>
      Effect.flatMap(found(id, store.getSessionJson(id)), (stored) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          isExpiredAt(stored, now)
            ? Effect.map(get(id), (session) => JSON.stringify(toCheckoutSession(session)))
            : Effect.succeed(stored.json)))

    /**
     * An update that keeps the items, without a transaction: read the session, run the reducer,
     * write it (and its reservations' expiry) if it has not changed since it was read — one
     * statement each. A refusal answers at once (what was read was the session at that moment);
     * `undefined` when the session changed in between or has no reservations to keep: then the
     * locked path decides.
     */
    const updateKeepingItems = (id: string, request: CheckoutSessionUpdateRequest, now: number) =>
      Effect.gen(function*() {
        const { session, version } = yield* found(id, store.getSessionVersion(id))
        const codes = request.discounts?.codes ?? session.discounts?.codes ?? []
        const redemptions = yield* couponUsage(codes, now, id, false)
        const transition = yield* reduce(session, SessionCommand.Update({ request }), context(now, new Map(), redemptions))
        if (transition.reservations.size === 0) return undefined
        const written = yield* store.updateSessionKeepingReservationsIfUnchanged(
          transition.session,
          Date.parse(transition.session.expires_at),
          version
        )
        return written ? transition.session : undefined
      })

    const update: CheckoutServiceShape["update"] = (id, request) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (request.items === undefined) {
          const updated = yield* updateKeepingItems(id, request, now)
          if (updated !== undefined) return updated
        }
        return yield* store.transaction(Effect.gen(function*() {
          const session = yield* lockExisting(id)
          const available = request.items === undefined
            ? new Map<string, number>()
            : yield* store.lockStock(uniqueProductIds(session.items, request.items), now, id)
          const codes = request.discounts?.codes ?? session.discounts?.codes ?? []
          const redemptions = yield* couponUsage(codes, now, id, false)
          const transition = yield* reduce(
            session,
            SessionCommand.Update({ request }),
            context(now, available, redemptions)
          )
          // The same items keep the same reservations: only their expiry follows the session's.
          if (request.items === undefined && transition.reservations.size > 0) {
            yield* store.updateSessionKeepingReservations(transition.session, Date.parse(transition.session.expires_at))
          } else {
            yield* save(transition)
          }
          return transition.session
        }))
      })

    /**
     * Step 1 of completing, one transaction: lock the session, check it can be paid, record the
     * payment attempt (or take over the pending one a crashed or concurrent request left), let the
     * provider hold the credential and hold the applied coupons.
     */
    const beginPayment = (
      id: string,
      request: CheckoutSessionCompleteRequest,
      credential: PaymentCredential,
      started: number
    ) =>
      store.transaction(Effect.gen(function*() {
        const { couponHolds, latestAttempt, session } = yield* lockForPayment(id)
        // Discount extension: lock the coupon rows (id order) and count redemptions and holds.
        const redemptions = yield* couponUsage(session.discounts?.codes ?? [], started, id, true)
        const preparing = reduce(
          session,
          SessionCommand.PrepareCompletion({ buyer: request.buyer }),
          context(started, new Map(), redemptions)
        )
        if (Either.isLeft(preparing) && preparing.left._tag === "DiscountUnavailable") {
          // Store the session re-priced without the discount, then answer 422: never charge more
          // than the total the agent saw.
          yield* store.updateSession(preparing.left.session)
          return Either.left<DiscountUnavailable | PaymentDeclined | PaymentRejected>(preparing.left)
        }
        const prepared = yield* preparing
        const amount = sessionTotal(prepared.session)
        const latest = Option.getOrUndefined(latestAttempt)
        const reuse = latest?.state === "pending" && latest.amount === amount &&
          latest.credentialRef === credentialRef(credential)
        if (latest?.state === "pending" && !reuse) {
          return yield* new PaymentInProgress({ sessionId: id })
        }
        const sequence = reuse ? latest!.sequence : (latest?.sequence ?? 0) + 1
        const attempt: PaymentAttempt = reuse ? latest! : {
          sessionId: id,
          sequence,
          idempotencyKey: `${id}:${sequence}`,
          amount,
          currency: prepared.session.currency,
          credentialRef: credentialRef(credential),
          state: "pending",
          chargeId: undefined,
          createdAt: started,
          updatedAt: started
        }
        const charge: ChargeRequest = {
          sessionId: id,
          amount,
          currency: attempt.currency,
          credential,
          idempotencyKey: attempt.idempotencyKey
        }
        const authorized = yield* Effect.either(payments.authorize(charge))
        if (Either.isLeft(authorized)) {
          if (authorized.left._tag === "StorageError") return yield* authorized.left
          yield* save(yield* reduce(
            prepared.session,
            SessionCommand.RecordPaymentFailure({ message: paymentMessage(authorized.left) }),
            context(started)
          ))
          return Either.left(authorized.left)
        }
        // Hold the applied coupons until the completing transaction counts them (or a decline frees
        // them); with nothing to hold and nothing held, there is nothing to write.
        const held = (prepared.session.discounts?.applied ?? []).map((applied) => applied.coupon.id)
        if (held.length > 0 || couponHolds.length > 0) {
          yield* store.holdCoupons(id, held, Date.parse(prepared.session.expires_at))
        }
        // The buyer of the request is applied first, whatever the payment's outcome. A new
        // attempt answers the version written, for the one-step completion (`completePaid`).
        const version = reuse
          ? yield* Effect.as(store.updateSession(prepared.session), undefined)
          : yield* store.updateSessionAndAttempt(prepared.session, attempt, "insert")
        return Either.right({ attempt, charge, paying: prepared.session, version })
      }))

    /** The order summary of a session being completed, with a new id. */
    const newOrder = (sessionId: string) =>
      Effect.map(ids.make("ord_"), (orderId): OrderSummary => ({
        id: orderId,
        checkout_session_id: sessionId,
        permalink_url: `${config.publicBaseUrl}/orders/${orderId}`
      }))

    /**
     * Step 3 of completing when the charge succeeded and nothing changed the session since step 1
     * wrote it at `version` (the usual case): the completed session, the attempt's success, the
     * order with its `order_create` event, the coupon redemptions and the stock consumption in one
     * atomic store step — one round trip instead of a transaction of six, no lock held between
     * round trips. `undefined` when the session changed meanwhile (a concurrent complete or
     * cancel, the expiry sweep): then `commitPayment` decides under the lock.
     */
    const completePaid = (paying: Session, version: number, attempt: PaymentAttempt, charged: Charge, now: number) =>
      Effect.gen(function*() {
        const order = yield* newOrder(paying.id)
        const completed = reduce(paying, SessionCommand.MarkCompleted({ order }), context(now))
        if (Either.isLeft(completed)) return undefined
        const session = completed.right.session
        const written = yield* store.completePaidSessionIfUnchanged({
          session,
          version,
          attemptSequence: attempt.sequence,
          chargeId: charged.id,
          now,
          order: yield* orderEvents.orderCreated({ order, session })
        })
        return written ? { ...session, order } : undefined
      })

    /**
     * Step 3 of completing, one transaction under the session's lock, when `completePaid` did not
     * complete: on success the order, the stock and coupon consumption, the `order_create` outbox
     * row and the completed status together; on a decline the message, with the token and coupons
     * given back.
     */
    const commitPayment = (
      id: string,
      attempt: PaymentAttempt,
      charge: ChargeRequest,
      charged: Either.Either<Charge, PaymentDeclined | PaymentRejected>,
      now: number
    ) =>
      store.transaction(Effect.gen(function*() {
        const { couponHolds, latestAttempt, session } = yield* lockForPayment(id)
        const current = Option.getOrUndefined(latestAttempt)
        if (current?.sequence !== attempt.sequence || current.state !== "pending") {
          // A concurrent request settled this attempt first.
          if (session.status === "completed") {
            return yield* new SessionFinal({ status: "completed", command: "complete" })
          }
          return current?.state === "declined" && Either.isLeft(charged)
            ? Either.left(charged.left)
            : yield* new PaymentInProgress({ sessionId: id })
        }
        if (Either.isLeft(charged)) {
          const failure = charged.left
          yield* payments.release(charge)
          yield* store.releaseCouponHolds(id)
          yield* store.updatePaymentAttempt({ ...attempt, state: "declined", updatedAt: now })
          yield* save(yield* reduce(
            session,
            SessionCommand.RecordPaymentFailure({ message: paymentMessage(failure) }),
            context(now)
          ))
          return Either.left(failure)
        }
        const order = yield* newOrder(id)
        const completed = yield* reduce(session, SessionCommand.MarkCompleted({ order }), context(now))
        // The full order (one row per session: `orders.checkout_session_id` is unique) and its
        // `order_create` event.
        yield* orderEvents.recordOrderCreated({ order, session: completed.session })
        yield* store.updateSessionAndAttempt(
          completed.session,
          { ...attempt, state: "succeeded", chargeId: charged.right.id, updatedAt: now },
          "update"
        )
        // The rows every checkout shares (coupons, stock) last: locked for one round trip, to COMMIT.
        // Discount extension: count the held coupon redemptions in the completing transaction.
        if (couponHolds.length > 0) yield* store.redeemCoupons(id)
        yield* store.consumeReservations(id)
        return Either.right({ ...completed.session, order })
      }))

    /**
     * Completing is two atomic steps around the provider call (issue 6, exactly-once):
     * `beginPayment`, then the charge outside any transaction with the attempt's idempotency key,
     * then `completePaid` (or `commitPayment` for a decline, or when the session changed in
     * between). A retry after a crash anywhere reuses the pending attempt and its key, so the
     * provider returns the first charge instead of making a second; a concurrent complete of the
     * same session does the same and then finds the session completed (409).
     */
    const complete: CheckoutServiceShape["complete"] = (id, request) =>
      Effect.gen(function*() {
        const credential = yield* resolveCredential(request.payment_data, catalog)
        const begun = yield* beginPayment(id, request, credential, yield* Clock.currentTimeMillis)
        if (Either.isLeft(begun)) return yield* begun.left
        const { attempt, charge, paying, version } = begun.right
        const charged = yield* Effect.either(payments.charge(charge))
        if (Either.isLeft(charged) && charged.left._tag === "StorageError") return yield* charged.left
        // The charge's outcome is stored even when the request is interrupted from here on (the
        // client went away): uninterruptible, like the transactions themselves.
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (Either.isRight(charged) && version !== undefined) {
            const completed = yield* completePaid(paying, version, attempt, charged.right, now)
            if (completed !== undefined) return completed
          }
          const outcome = yield* commitPayment(
            id,
            attempt,
            charge,
            charged as Either.Either<Charge, PaymentDeclined | PaymentRejected>,
            now
          )
          return yield* outcome
        }))
      })

    const cancel: CheckoutServiceShape["cancel"] = (id) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return yield* store.transaction(Effect.gen(function*() {
          const session = yield* lockExisting(id)
          const transition = yield* reduce(session, SessionCommand.Cancel(), context(now)).pipe(
            Effect.catchIf((error) => error._tag !== "SessionFinal", Effect.die)
          ) as Effect.Effect<Transition, SessionFinal>
          yield* save(transition)
          return transition.session
        }))
      })

    const expireDue: CheckoutServiceShape["expireDue"] = (limit) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return yield* store.transaction(Effect.gen(function*() {
          const due = yield* store.findExpiredSessionIds(now, limit)
          let expired = 0
          for (const id of due) {
            const session = yield* store.lockSession(id)
            if (Option.isNone(session)) continue
            const transition = yield* reduce(session.value, SessionCommand.Expire(), context(now)).pipe(Effect.orDie)
            if (transition.session.status === "expired") {
              yield* save(transition)
              expired++
            }
          }
          return expired
        }))
      })

    return { create, get, getJson, update, complete, cancel, expireDue }
  })
)
