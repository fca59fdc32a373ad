/**
 * Checkout storage: one port per aggregate, and the atomic steps of use cases that write several.
 * Every state change runs in `transaction` or is one such step. Stores decide nothing: the rules
 * are the domain's (the two also written in SQL are held to them by property tests). A conditional
 * step answers false, writing nothing, when what it was decided on changed. See `docs/concurrency.md`.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { AnswerToStore } from "../idempotency/idempotent-answer.ts"
import type { OrderChange } from "../orders/order-store.ts"
import type { PaymentAttempt } from "./payment/attempt.ts"
import type { SessionStatus } from "./session/schemas.ts"
import type { Reservations, Session, Transition } from "./session/session.ts"

/** `version` moves on with every write of the session. */
export interface VersionedSession {
  readonly session: Session
  readonly version: number
}

/** A session locked for a payment step, with what that step reads about it, in one round trip. */
export interface SessionForPayment extends VersionedSession {
  readonly latestAttempt: Option.Option<PaymentAttempt>
  /** Live or expired, in id order. */
  readonly couponHolds: ReadonlyArray<string>
}

export interface PaidCompletion {
  readonly session: Session
  /** The version decided on: nothing is written unless the session is still at it. */
  readonly version: number
  readonly attemptSequence: number
  readonly chargeId: string
  /** Epoch ms. */
  readonly now: number
  readonly order: OrderChange
}

export interface StockLevel {
  readonly productId: string
  readonly onHand: number
  /** Units held by live reservations. */
  readonly reserved: number
}

/** The stored wire form as JSON text, with what tells whether it must show expired instead. */
export interface SessionJson {
  readonly status: SessionStatus
  readonly expires_at: string
  readonly json: string
}

export interface SessionStore {
  readonly get: (id: string) => Effect.Effect<Option.Option<Session>, StorageError>
  readonly getJson: (id: string) => Effect.Effect<Option.Option<SessionJson>, StorageError>
  /** Newest first, only in `status` when given, at most `limit`. */
  readonly list: (
    filter: { readonly status?: SessionStatus; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<Session>, StorageError>
  readonly lock: (id: string) => Effect.Effect<Option.Option<VersionedSession>, StorageError>
  readonly insert: (session: Session) => Effect.Effect<void, StorageError>
  readonly update: (session: Session) => Effect.Effect<number, StorageError>
}

/** Stock rows are locked in ascending product-id order, in one pass per transaction. */
export interface InventoryStore {
  /** Only products not yet stored: the catalog seeds, the database keeps. */
  readonly seedStock: (
    products: ReadonlyArray<{ readonly id: string; readonly stock: number }>
  ) => Effect.Effect<void, StorageError>
  readonly stockLevels: (now: number) => Effect.Effect<ReadonlyArray<StockLevel>, StorageError>
  /** Locks the stock rows; per known product, the units available to `forSession` (`availableTo`). */
  readonly lockStock: (
    productIds: ReadonlyArray<string>,
    now: number,
    forSession: string
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageError>
  /** Replaces the session's reservations, counting until `expiresAt` (epoch ms). */
  readonly setReservations: (
    sessionId: string,
    reservations: Reservations,
    expiresAt: number
  ) => Effect.Effect<void, StorageError>
  /** Removes them, taking their units off the stock on hand. */
  readonly consumeReservations: (sessionId: string) => Effect.Effect<void, StorageError>
  /** Removes them, returning their units to the available stock. */
  readonly releaseReservations: (sessionId: string) => Effect.Effect<void, StorageError>
}

export interface PaymentAttemptStore {
  readonly update: (attempt: PaymentAttempt) => Effect.Effect<void, StorageError>
}

/** A hold is taken before the charge; the completion turns it into a counted redemption. */
export interface CouponStore {
  /** Only coupons not yet stored: the catalog seeds, the database keeps. */
  readonly seed: (
    coupons: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>
  ) => Effect.Effect<void, StorageError>
  /** Times redeemed plus other sessions' live holds; `lock` locks the coupon rows in id order. */
  readonly usage: (
    couponIds: ReadonlyArray<string>,
    now: number,
    forSession: string,
    lock: boolean
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageError>
  /** Replaces the session's holds, counting until `expiresAt` (epoch ms). */
  readonly hold: (sessionId: string, couponIds: ReadonlyArray<string>, expiresAt: number) => Effect.Effect<
    void,
    StorageError
  >
  readonly releaseHolds: (sessionId: string) => Effect.Effect<void, StorageError>
  readonly redemptions: Effect.Effect<ReadonlyMap<string, number>, StorageError>
}

/** The sessions this process wrote last, at the version written (`written-sessions.ts`). */
export interface WrittenSessions {
  readonly take: (id: string) => SessionForPayment | undefined
  /** Call only once the write committed. */
  readonly put: (written: SessionForPayment) => void
}

export interface CheckoutStoreService {
  /** Nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  readonly ping: Effect.Effect<void, StorageError>

  readonly sessions: SessionStore
  readonly inventory: InventoryStore
  readonly paymentAttempts: PaymentAttemptStore
  readonly coupons: CouponStore
  readonly written: WrittenSessions

  /**
   * Inserts the session with its reservations if each fits (`reservationsFit`), stock rows locked.
   * `answer` is stored in the same step (here and below: a lost claim fails it, writing nothing).
   */
  readonly createSessionReservingStock: (
    transition: Transition,
    now: number,
    answer?: AnswerToStore
  ) => Effect.Effect<boolean, StorageError>
  /** Writes the session, its reservations' expiry following, if it is still at `version`. */
  readonly updateSessionKeepingItems: (
    session: Session,
    version: number,
    answer?: AnswerToStore
  ) => Effect.Effect<boolean, StorageError>
  /** Under the session's lock: the session, its reservations replaced (released when none). */
  readonly updateSessionAndReservations: (transition: Transition) => Effect.Effect<void, StorageError>
  /** Locks up to `limit` due sessions, skipping locked ones, and in a transaction their stock, ascending. */
  readonly lockExpiredSessions: (
    statuses: ReadonlyArray<SessionStatus>,
    now: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /** Sessions with an attempt pending since `before`, oldest first; the settlement re-checks under the lock. */
  readonly sessionsWithPaymentPendingSince: (
    before: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /** `sessions.lock`, with the latest attempt and coupon holds as of the lock. */
  readonly lockSessionForPayment: (id: string) => Effect.Effect<Option.Option<SessionForPayment>, StorageError>
  /** The same without locking, for a decision `startPaymentAttemptAt` writes only if still true. */
  readonly readSessionForPayment: (id: string) => Effect.Effect<Option.Option<SessionForPayment>, StorageError>
  /** The session with its new attempt, all or nothing; answers the session's version. */
  readonly startPaymentAttempt: (session: Session, attempt: PaymentAttempt) => Effect.Effect<number, StorageError>
  /** `startPaymentAttempt` if the session is still at `version`; none, writing nothing, otherwise. */
  readonly startPaymentAttemptAt: (
    session: Session,
    attempt: PaymentAttempt,
    version: number
  ) => Effect.Effect<Option.Option<number>, StorageError>
  /** If still at `version` with the attempt pending: attempt, session, order, coupons and stock in one step. */
  readonly completePaidCheckout: (
    completion: PaidCompletion,
    answer?: AnswerToStore
  ) => Effect.Effect<boolean, StorageError>
}

export class CheckoutStore extends Context.Tag("acp/CheckoutStore")<CheckoutStore, CheckoutStoreService>() {}
