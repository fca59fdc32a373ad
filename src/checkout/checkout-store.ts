/**
 * Storage of checkout sessions and what they hold, one port per aggregate — `sessions`, `inventory`
 * (stock and reservations), `paymentAttempts`, `coupons` (redemptions and holds) — and the atomic
 * steps of the use cases that write several of them at once, each named after its use case.
 *
 * Every state change runs inside `transaction`, or is one of those steps: in PostgreSQL one SQL
 * transaction with row locks, or one statement; in memory one critical section with rollback on
 * failure. Calls made inside `transaction` join it (it is re-entrant). Stores decide nothing: the
 * rules (what is available, what fits, which statuses are active) are the domain's, passed in or
 * applied by the caller. Two are written in SQL as well, each held to the domain rule by a
 * property test: the "fits" of `createSessionReservingStock` (atomic in one statement) and which
 * coupon holds `coupons.usage` counts (a filter, so stale holds are never read).
 *
 * The conditional steps (`createSessionReservingStock`, `updateSessionKeepingItems`,
 * `completePaidCheckout`) answer false, writing nothing, when what the caller decided on no longer
 * holds (`write-optimistically.ts` is how the use cases use them). Locking and the lock order are
 * explained in `docs/concurrency.md`.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { AnswerToStore } from "../idempotency/idempotent-answer.ts"
import type { OrderChange } from "../orders/order-store.ts"
import type { PaymentAttempt } from "./payment/attempt.ts"
import type { SessionStatus } from "./session/schemas.ts"
import type { Reservations, Session, Transition } from "./session/session.ts"

/** A stored session with its version: a number every write of the session moves on. */
export interface VersionedSession {
  readonly session: Session
  readonly version: number
}

/** A session locked for a payment step, with what that step reads about it, in one round trip. */
export interface SessionForPayment extends VersionedSession {
  /** Its most recent payment attempt. */
  readonly latestAttempt: Option.Option<PaymentAttempt>
  /** The coupons it holds (live or expired), in id order. */
  readonly couponHolds: ReadonlyArray<string>
}

/** What `completePaidCheckout` writes. */
export interface PaidCompletion {
  /** The session completed (status `completed`, with its order). */
  readonly session: Session
  /** The version of the session it was decided on: nothing is written unless it is still at it. */
  readonly version: number
  /** The pending attempt that was charged: it becomes `succeeded` with `chargeId` at `now`. */
  readonly attemptSequence: number
  readonly chargeId: string
  /** Epoch ms. */
  readonly now: number
  /** The session's order and its `order_create` event (rows of the `OrderStore`). */
  readonly order: OrderChange
}

export interface StockLevel {
  readonly productId: string
  readonly onHand: number
  /** Units held by live (unexpired) reservations at the time asked. */
  readonly reserved: number
}

/**
 * A session's wire form serialized by the store (`toCheckoutSession` of the stored session, as
 * JSON text), with the status and deadline it holds: enough to answer a read without decoding
 * the session, and to tell when the session must be shown expired instead.
 */
export interface SessionJson {
  readonly status: SessionStatus
  readonly expires_at: string
  readonly json: string
}

/** Checkout sessions. */
export interface SessionStore {
  /** Reads a session without locking. */
  readonly get: (id: string) => Effect.Effect<Option.Option<Session>, StorageError>
  /** Reads a session's wire form as JSON text, without locking (one statement). */
  readonly getJson: (id: string) => Effect.Effect<Option.Option<SessionJson>, StorageError>
  /**
   * Sessions, newest first (SQL: created at descending, then id descending; memory: latest
   * inserted first), only those in `status` when given, at most `limit` (0 or less: none).
   */
  readonly list: (
    filter: { readonly status?: SessionStatus; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<Session>, StorageError>
  /** Reads and locks a session, with its version, for the rest of the transaction. */
  readonly lock: (id: string) => Effect.Effect<Option.Option<VersionedSession>, StorageError>
  /** Inserts a session (version 1); a duplicate id fails. */
  readonly insert: (session: Session) => Effect.Effect<void, StorageError>
  /** Stores a session; answers its new version. An absent session fails. */
  readonly update: (session: Session) => Effect.Effect<number, StorageError>
}

/**
 * Stock on hand per product and the reservations of sessions. Stock rows are locked in
 * ascending product-id order, in one pass per transaction.
 */
export interface InventoryStore {
  /** Inserts stock rows for products not yet stored (the catalog file seeds; the database keeps). */
  readonly seedStock: (
    products: ReadonlyArray<{ readonly id: string; readonly stock: number }>
  ) => Effect.Effect<void, StorageError>
  readonly stockLevels: (now: number) => Effect.Effect<ReadonlyArray<StockLevel>, StorageError>
  /**
   * Locks the stock rows of `productIds` and returns, for each known product, the units available
   * to `forSession` at `now` (epoch ms), as `availableTo` of `inventory.ts` counts them. Unknown
   * products are absent from the map.
   */
  readonly lockStock: (
    productIds: ReadonlyArray<string>,
    now: number,
    forSession: string
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageError>
  /** Replaces the session's reservations; they count until `expiresAt` (epoch ms). */
  readonly setReservations: (
    sessionId: string,
    reservations: Reservations,
    expiresAt: number
  ) => Effect.Effect<void, StorageError>
  /** Removes the session's reservations and takes those units off the stock on hand. */
  readonly consumeReservations: (sessionId: string) => Effect.Effect<void, StorageError>
  /** Removes the session's reservations, returning the units to the available stock. */
  readonly releaseReservations: (sessionId: string) => Effect.Effect<void, StorageError>
}

/** Payment attempts, by session and sequence. */
export interface PaymentAttemptStore {
  /** Stores the outcome of an existing attempt; an absent one fails. */
  readonly update: (attempt: PaymentAttempt) => Effect.Effect<void, StorageError>
}

/**
 * Coupon redemptions: a count per coupon and the holds of sessions paying. A hold is taken before
 * the charge and turned into a counted redemption by the completion.
 */
export interface CouponStore {
  /** Inserts coupon rows not yet stored with their initial count (the catalog seeds; the database keeps). */
  readonly seed: (
    coupons: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>
  ) => Effect.Effect<void, StorageError>
  /**
   * For each stored coupon of `couponIds`: times redeemed plus the holds of other sessions live at
   * `now`. With `lock`, the coupon rows are locked (`FOR UPDATE`, in id order) for the transaction.
   */
  readonly usage: (
    couponIds: ReadonlyArray<string>,
    now: number,
    forSession: string,
    lock: boolean
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageError>
  /** Replaces the session's holds with one per coupon; they count until `expiresAt` (epoch ms). */
  readonly hold: (sessionId: string, couponIds: ReadonlyArray<string>, expiresAt: number) => Effect.Effect<
    void,
    StorageError
  >
  /** Removes the session's holds without counting them. */
  readonly releaseHolds: (sessionId: string) => Effect.Effect<void, StorageError>
  /** Times redeemed per stored coupon id (diagnostics and tests). */
  readonly redemptions: Effect.Effect<ReadonlyMap<string, number>, StorageError>
}

/**
 * The sessions this process wrote last, with their version, latest attempt and coupon holds at
 * that version: what the next step of a session decides on first, instead of reading it again.
 */
export interface WrittenSessions {
  /** The entry of `id`, removed: undefined when this process has none. */
  readonly take: (id: string) => SessionForPayment | undefined
  /** Keeps `written` as the latest entry of its session. Call only once its write committed. */
  readonly put: (written: SessionForPayment) => void
}

export interface CheckoutStoreService {
  /** Runs `effect` atomically; nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** A cheap round trip to the store, for `/readyz`. */
  readonly ping: Effect.Effect<void, StorageError>

  readonly sessions: SessionStore
  readonly inventory: InventoryStore
  readonly paymentAttempts: PaymentAttemptStore
  readonly coupons: CouponStore
  /** The sessions this process wrote last (`written-sessions.ts`), each store its own. */
  readonly written: WrittenSessions

  /**
   * Create: the new session with its reservations (counting until its `expires_at`), if each is at
   * most what is available to it at `now` (`reservationsFit` of `inventory.ts`), stock rows locked;
   * false, and nothing written, otherwise. One atomic step (needs no surrounding transaction). With
   * `answer`, the request's idempotent answer is stored in that same step when the session is
   * written; a lost claim fails the step (`claimLost`) and nothing is written.
   */
  readonly createSessionReservingStock: (
    transition: Transition,
    now: number,
    answer?: AnswerToStore
  ) => Effect.Effect<boolean, StorageError>
  /**
   * An update that keeps the items: the session, and its reservations' expiry moved to the
   * session's `expires_at` (quantities, and so the stock, unchanged), if the stored session is
   * still at `version`; false, and nothing written, otherwise. One atomic step.
   */
  readonly updateSessionKeepingItems: (
    session: Session,
    version: number,
    answer?: AnswerToStore
  ) => Effect.Effect<boolean, StorageError>
  /**
   * Any other change of an existing session, its lock held: the session, and its reservations as
   * `transition` says (replaced, counting until the session's `expires_at`; released when none).
   */
  readonly updateSessionAndReservations: (transition: Transition) => Effect.Effect<void, StorageError>
  /**
   * The expiry sweep: locks up to `limit` sessions whose status is one of `statuses` and whose
   * `expires_at` is at or before `now`, oldest first, skipping sessions another transaction holds
   * locked, and (inside a transaction) the stock rows their reservations concern, in one ascending
   * pass; answers their ids.
   */
  readonly lockExpiredSessions: (
    statuses: ReadonlyArray<SessionStatus>,
    now: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * The settlement sweep: the ids of sessions with a payment attempt still pending that was made
   * at or before `before`, oldest first, at most `limit` (the settlement checks under the
   * session's lock that it is still the latest attempt, and still pending).
   */
  readonly sessionsWithPaymentPendingSince: (
    before: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * Completing, steps 1 and 3 under the lock: `sessions.lock`, with the session's latest payment
   * attempt and coupon holds as they are once the lock is held.
   */
  readonly lockSessionForPayment: (id: string) => Effect.Effect<Option.Option<SessionForPayment>, StorageError>
  /**
   * Completing, step 1 without the lock: what `lockSessionForPayment` answers, read without
   * locking, for a decision that `startPaymentAttemptAt` then writes only if it still holds.
   */
  readonly readSessionForPayment: (id: string) => Effect.Effect<Option.Option<SessionForPayment>, StorageError>
  /**
   * Completing, step 1: the session and its new attempt, in one step (a duplicate (session,
   * sequence) fails, an absent session fails, and nothing is written). Answers the session's version.
   */
  readonly startPaymentAttempt: (session: Session, attempt: PaymentAttempt) => Effect.Effect<number, StorageError>
  /**
   * `startPaymentAttempt` if the stored session is still at `version`: answers its new version;
   * none, and nothing written, when it is not (or is absent). One atomic step.
   */
  readonly startPaymentAttemptAt: (
    session: Session,
    attempt: PaymentAttempt,
    version: number
  ) => Effect.Effect<Option.Option<number>, StorageError>
  /**
   * Completing, step 3 after a successful charge, if the stored session is still at
   * `completion.version` and its attempt `attemptSequence` still pending: marks the attempt
   * succeeded, stores the session, writes the order and queues its event (as
   * `OrderStore.saveOrderWithEvent`), counts the session's coupon holds as redemptions (holds
   * removed) and consumes its reservations. False, and nothing written, otherwise. One atomic step,
   * which stores `answer` too when it writes (a lost claim fails it and writes nothing).
   */
  readonly completePaidCheckout: (
    completion: PaidCompletion,
    answer?: AnswerToStore
  ) => Effect.Effect<boolean, StorageError>
}

export class CheckoutStore extends Context.Tag("acp/CheckoutStore")<CheckoutStore, CheckoutStoreService>() {}
