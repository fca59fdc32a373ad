/**
 * Storage of checkout sessions, stock, reservations, payment attempts and coupon redemptions (the
 * order row of a completed session is the `OrderStore`'s; `completePaidSessionIfUnchanged` writes
 * it too, in the same atomic step as the completion).
 *
 * Every state change runs inside `transaction`: in PostgreSQL one SQL transaction with row locks
 * (`SELECT … FOR UPDATE` on the session row and on the stock rows of the products concerned, in
 * product-id order so two transactions never deadlock); in memory one critical section with
 * rollback on failure. Calls made inside `transaction` join it (it is re-entrant).
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { SessionStatus } from "./checkout-schemas.ts"
import type { Reservations, Session } from "./session-model.ts"
import type { OrderChange } from "../orders/order-store.ts"

/**
 * One try at paying for a session (issue 6). Recorded, and committed, before the provider is
 * called, with a provider idempotency key that is the same for every retry of this try: a crash
 * between the charge and the completing transaction is recovered by calling the provider again
 * with the same key, which returns the first charge instead of making a second.
 */
export interface PaymentAttempt {
  readonly sessionId: string
  /** 1 for the first try of the session, +1 after each declined or rejected one. */
  readonly sequence: number
  /** `<session id>:<sequence>`: what the provider dedupes charges by. */
  readonly idempotencyKey: string
  readonly amount: number
  readonly currency: string
  /** Non-secret reference of the credential (a `vt_` token id or a test token name). */
  readonly credentialRef: string
  readonly state: "pending" | "succeeded" | "declined"
  readonly chargeId: string | undefined
  /** Epoch milliseconds. */
  readonly createdAt: number
  readonly updatedAt: number
}

/** A session locked for a payment step, with what that step reads about it, in one round trip. */
export interface SessionForPayment {
  readonly session: Session
  /** Its most recent payment attempt. */
  readonly latestAttempt: Option.Option<PaymentAttempt>
  /** The coupons it holds (live or expired), in id order. */
  readonly couponHolds: ReadonlyArray<string>
}

/** What `completePaidSessionIfUnchanged` writes. */
export interface PaidCompletion {
  /** The session completed (status `completed`, with its order). */
  readonly session: Session
  /**
   * The stored session's version when the payment began (what `updateSessionAndAttempt` answered):
   * nothing is written unless the session is still at it.
   */
  readonly version: number
  /** The pending attempt that was charged: it becomes `succeeded` with `chargeId` at `now`. */
  readonly attemptSequence: number
  readonly chargeId: string
  /** Epoch ms. */
  readonly now: number
  /** The session's order and its `order_create` event (rows of the `OrderStore`). */
  readonly order: OrderChange
}

/** The outcome of `insertSessionIfAvailable`. */
export type InsertIfAvailable =
  | { readonly inserted: true }
  | { readonly inserted: false; readonly available: ReadonlyMap<string, number> }

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

export interface CheckoutStoreService {
  /** Runs `effect` atomically; nested calls join the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>

  /** Reads a session without locking. */
  readonly getSession: (id: string) => Effect.Effect<Option.Option<Session>, StorageError>
  /** Reads a session's wire form as JSON text, without locking (one statement). */
  readonly getSessionJson: (id: string) => Effect.Effect<Option.Option<SessionJson>, StorageError>
  /** Reads and locks a session for the rest of the transaction. */
  readonly lockSession: (id: string) => Effect.Effect<Option.Option<Session>, StorageError>
  readonly insertSession: (session: Session) => Effect.Effect<void, StorageError>
  readonly updateSession: (session: Session) => Effect.Effect<void, StorageError>
  /**
   * `updateSession` and, in the same step, moves the expiry of the session's reservations to
   * `expiresAt` (epoch ms), their quantities unchanged: a change that keeps the items.
   */
  readonly updateSessionKeepingReservations: (session: Session, expiresAt: number) => Effect.Effect<void, StorageError>
  /**
   * Reads a session without locking, with its version: a number that every write of the session
   * (insert, update) moves on. For optimistic updates: read, decide, write if unchanged.
   */
  readonly getSessionVersion: (
    id: string
  ) => Effect.Effect<Option.Option<{ readonly session: Session; readonly version: number }>, StorageError>
  /**
   * `updateSessionKeepingReservations` if the stored session is still at `version` (one atomic
   * step, no surrounding transaction needed); false, and nothing written, when it is not (changed
   * since it was read, or absent).
   */
  readonly updateSessionKeepingReservationsIfUnchanged: (
    session: Session,
    expiresAt: number,
    version: number
  ) => Effect.Effect<boolean, StorageError>
  /**
   * Creates a session with its reservations in one atomic step, if they fit: locks the stock rows
   * of the reserved products and, when each reservation is at most what is available to the new
   * session at `now` (as `lockStock` counts), inserts the session and the reservations (counting
   * until `expiresAt`, epoch ms) and answers `inserted`; otherwise changes nothing and answers the
   * availability it saw (known products only). Needs no surrounding transaction.
   */
  readonly insertSessionIfAvailable: (
    session: Session,
    reservations: Reservations,
    expiresAt: number,
    now: number
  ) => Effect.Effect<InsertIfAvailable, StorageError>

  /**
   * Locks the stock rows of `productIds` and returns, for each known product, the units available
   * to `forSession`: on hand minus the quantities of other sessions' reservations that have not
   * expired at `now` (epoch ms). Unknown products are absent from the map.
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


  /**
   * Ids of active sessions whose `expires_at` is at or before `now`, at most `limit`, skipping
   * sessions another transaction holds locked.
   */
  readonly findExpiredSessionIds: (now: number, limit: number) => Effect.Effect<ReadonlyArray<string>, StorageError>

  /** Inserts stock rows for products not yet stored (the catalog file seeds; the database keeps). */
  readonly seedStock: (
    products: ReadonlyArray<{ readonly id: string; readonly stock: number }>
  ) => Effect.Effect<void, StorageError>
  readonly stockLevels: (now: number) => Effect.Effect<ReadonlyArray<StockLevel>, StorageError>

  /**
   * `lockSession`, and the session's latest payment attempt and coupon holds as they are once the
   * lock is held (what a transaction that held it before committed is seen).
   */
  readonly lockSessionForPayment: (id: string) => Effect.Effect<Option.Option<SessionForPayment>, StorageError>
  /**
   * `updateSession` and, in the same step, records a new attempt (`insert`; (session, sequence) is
   * unique, a duplicate fails) or stores the outcome of an existing one (`update`, by session and
   * sequence; it must exist). All or nothing. Answers the session's version after the write (as
   * `getSessionVersion` counts).
   */
  readonly updateSessionAndAttempt: (
    session: Session,
    attempt: PaymentAttempt,
    write: "insert" | "update"
  ) => Effect.Effect<number, StorageError>
  /**
   * Completes a paid session in one atomic step (no surrounding transaction needed), if the stored
   * session is still at `completion.version` and its attempt `attemptSequence` still pending:
   * marks the attempt succeeded, stores the session, writes the order and queues its event (as
   * `OrderStore.saveOrderWithEvent`), counts the session's coupon holds as redemptions and
   * consumes its reservations (as `redeemCoupons` and `consumeReservations`). False, and nothing
   * written, when the session changed since (or is absent) or the attempt is not pending.
   */
  readonly completePaidSessionIfUnchanged: (completion: PaidCompletion) => Effect.Effect<boolean, StorageError>
  /** Stores the outcome of an attempt (by session and sequence). */
  readonly updatePaymentAttempt: (attempt: PaymentAttempt) => Effect.Effect<void, StorageError>

  // Coupons (discount extension, issue 8). A hold is taken in the first completion transaction
  // (before the charge) and turned into a counted redemption in the completing one.

  /** Inserts coupon rows not yet stored with their initial count (the catalog seeds; the database keeps). */
  readonly seedCoupons: (
    coupons: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>
  ) => Effect.Effect<void, StorageError>
  /**
   * For each stored coupon of `couponIds`: times redeemed plus the holds of other sessions live at
   * `now`. With `lock`, the coupon rows are locked (`FOR UPDATE`, in id order) for the transaction.
   */
  readonly couponUsage: (
    couponIds: ReadonlyArray<string>,
    now: number,
    forSession: string,
    lock: boolean
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageError>
  /** Replaces the session's holds with one per coupon; they count until `expiresAt` (epoch ms). */
  readonly holdCoupons: (
    sessionId: string,
    couponIds: ReadonlyArray<string>,
    expiresAt: number
  ) => Effect.Effect<void, StorageError>
  /** Counts one redemption per hold of the session (rows locked in id order) and removes the holds. */
  readonly redeemCoupons: (sessionId: string) => Effect.Effect<void, StorageError>
  /** Removes the session's holds without counting them. */
  readonly releaseCouponHolds: (sessionId: string) => Effect.Effect<void, StorageError>
  /** Times redeemed per stored coupon id (diagnostics and tests). */
  readonly couponRedemptions: Effect.Effect<ReadonlyMap<string, number>, StorageError>

  /** A cheap round trip to the store, for `/readyz`. */
  readonly ping: Effect.Effect<void, StorageError>
}

export class CheckoutStore extends Context.Tag("acp/CheckoutStore")<CheckoutStore, CheckoutStoreService>() {}
