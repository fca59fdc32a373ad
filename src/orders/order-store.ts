/**
 * Storage of full orders (the lifecycle of CONTRACT §8) and of the sender's transactional outbox
 * of order events. Both live behind one service because they are always written together: an
 * order change and the event announcing it are one transaction.
 *
 * - SQL: the `orders` table of migration 0001 (the `data` column holds the full order once the
 *   order events record it) and `webhook_outbox` of migration 0004. `transaction` is
 *   `sqlTransaction` (`src/db/sql-transaction.ts`), so a call made inside any transaction of the
 *   same `SqlClient` (e.g. the checkout completion) joins it.
 * - The memory double (`test/doubles/`) has the same semantics, on the tables of every memory store.
 *
 * Delivery by several workers (`docs/concurrency.md`, "The order-event outbox"): `claimDue` takes a lease (`locked_until`) on each event it returns,
 * in a short transaction (`FOR UPDATE SKIP LOCKED`), and counts the attempt; `finishAttempts`
 * records each result only if its claim is still the current one (same attempt number). Only the
 * lowest pending sequence of each order is ever claimable, so the events of one order are
 * delivered one after the other, in order.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { OrderEvent, OrderEventType } from "./model/order-event.ts"
import { storedEventJson, storedOrderJson } from "./model/order-json.ts"
import type { Order, OrderStatus } from "./model/order.ts"

export type DeliveryState = "pending" | "delivered" | "dead"

/** Which full orders `listOrders` answers. */
export interface OrderFilter {
  /** Only orders in this status. */
  readonly status?: OrderStatus
  /**
   * Only the order whose id or checkout session id is exactly this (trimmed; empty or blank
   * means no search).
   */
  readonly search?: string
  /** At most this many (0 or less: none). */
  readonly limit: number
}

/** The search of `filter`, trimmed; undefined when there is none. */
export const searchTerm = (filter: OrderFilter): string | undefined => {
  const term = filter.search?.trim()
  return term === undefined || term === "" ? undefined : term
}

export interface StoredFullOrder {
  readonly order: Order
  readonly sessionId: string
  /** Epoch ms. */
  readonly createdAt: number
}

/** One outbox row. Times are epoch ms. */
export interface OutboxEvent {
  /** `evt_…`, also the `Request-Id` of every delivery attempt. */
  readonly id: string
  readonly orderId: string
  /** 1, 2, … per order, in the order the changes were made. */
  readonly sequence: number
  readonly type: OrderEventType
  /** The event (the full order); the body sent is made from it in the configured version. */
  readonly payload: OrderEvent
  readonly state: DeliveryState
  /** Attempts made (a claimed event counts the attempt in progress). */
  readonly attempts: number
  readonly nextAttemptAt: number
  readonly firstAttemptAt: number | null
  readonly lastError: string | null
  readonly lastStatus: number | null
  readonly createdAt: number
  readonly deliveredAt: number | null
}

export interface AttemptResult {
  /** `pending` schedules another attempt at `nextAttemptAt`. */
  readonly state: DeliveryState
  readonly nextAttemptAt: number
  readonly lastStatus: number | null
  readonly lastError: string | null
  /** Epoch ms of the result. */
  readonly at: number
}

/** The result of one delivery attempt, for `finishAttempts`. */
export interface FinishedAttempt {
  readonly id: string
  /** The attempt number the claim counted (`OutboxEvent.attempts` as claimed). */
  readonly attempt: number
  readonly result: AttemptResult
}

export interface DeliveryCounts {
  readonly pending: number
  readonly delivered: number
  readonly dead: number
}

/** The outbox row `enqueueEvent` makes: event `id` of `payload`'s order, number `sequence`, due at `now`. */
export const pendingEvent = (
  { id, now, payload }: NewOrderEvent,
  sequence: number
): OutboxEvent => ({
  id,
  orderId: payload.data.id,
  sequence,
  type: payload.type,
  payload,
  state: "pending",
  attempts: 0,
  nextAttemptAt: now,
  firstAttemptAt: null,
  lastError: null,
  lastStatus: null,
  createdAt: now,
  deliveredAt: null
})

/** An event to queue: `id` (`evt_…`), the event, and when it is made (epoch ms). */
export interface NewOrderEvent {
  readonly id: string
  readonly payload: OrderEvent
  readonly now: number
}

/** An order as it now is, with the event announcing the change (`payload` is about `stored.order`). */
export interface OrderChange {
  readonly stored: StoredFullOrder
  readonly event: NewOrderEvent
}

/** An order change as the SQL stores write it: order and event as JSON text, times as ISO strings. */
export const encodeOrderChange = ({ event, stored }: OrderChange) => {
  const orderText = storedOrderJson(stored.order)
  return {
    orderId: stored.order.id,
    sessionId: stored.sessionId,
    orderJson: orderText,
    orderCreatedAt: new Date(stored.createdAt).toISOString(),
    eventId: event.id,
    eventType: event.payload.type,
    // The event announces this very order (`OrderChange`): its text is the order row's.
    eventJson: storedEventJson(event.payload, event.payload.data === stored.order ? orderText : undefined),
    eventAt: new Date(event.now).toISOString()
  }
}

export interface OrderStoreService {
  /** Runs `effect` atomically; nested calls (and calls inside the SQL client's transaction) join. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>

  readonly getOrder: (id: string) => Effect.Effect<Option.Option<StoredFullOrder>, StorageError>
  /** The order whose `permalink_url` carries `token` (`order-permalink.ts`). */
  readonly findOrderByPermalink: (token: string) => Effect.Effect<Option.Option<StoredFullOrder>, StorageError>
  /**
   * Full orders, newest first (created at descending, then id descending), as `filter` says. Rows
   * holding only a checkout summary are no order yet (as for `getOrder`) and never listed.
   */
  readonly listOrders: (filter: OrderFilter) => Effect.Effect<ReadonlyArray<StoredFullOrder>, StorageError>
  /** Reads and locks an order for the rest of the transaction. */
  readonly lockOrder: (id: string) => Effect.Effect<Option.Option<StoredFullOrder>, StorageError>
  /** Inserts the order, or replaces the data of the order with the same id. */
  readonly saveOrder: (stored: StoredFullOrder) => Effect.Effect<void, StorageError>

  /**
   * `saveOrder` and `enqueueEvent` in one atomic step (no surrounding transaction needed): the
   * order change and the event announcing it (`payload` is about `stored.order`).
   */
  readonly saveOrderWithEvent: (
    stored: StoredFullOrder,
    event: NewOrderEvent
  ) => Effect.Effect<OutboxEvent, StorageError>
  /** Appends a pending event for `payload.data.id` with the next sequence of that order, due at `now`. */
  readonly enqueueEvent: (input: NewOrderEvent) => Effect.Effect<OutboxEvent, StorageError>

  /**
   * Claims at most `limit` events due at `now` whose order has no earlier pending event and that
   * no live lease covers, leasing them until `now + leaseMs` and counting the attempt (setting the
   * first attempt time if unset). Skips rows another transaction holds locked.
   */
  readonly claimDue: (
    now: number,
    limit: number,
    leaseMs: number
  ) => Effect.Effect<ReadonlyArray<OutboxEvent>, StorageError>
  /**
   * Records, in one step, the result of attempt number `attempt` of each event `id` (distinct ids)
   * and ends its lease; answers, in the same order, whether each was recorded: false (and nothing
   * changed for it) when that event is no longer pending under that attempt.
   */
  readonly finishAttempts: (
    finished: ReadonlyArray<FinishedAttempt>
  ) => Effect.Effect<ReadonlyArray<boolean>, StorageError>

  readonly getEvent: (id: string) => Effect.Effect<Option.Option<OutboxEvent>, StorageError>
  /** Events, newest first, optionally of one state and/or one order. */
  readonly listEvents: (
    filter: { readonly state?: DeliveryState; readonly orderId?: string; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<OutboxEvent>, StorageError>
  /**
   * A dead event becomes pending again, due at `now`, with a fresh retry budget (attempts and the
   * first attempt time reset; the last error is kept). None when the event is absent or not dead.
   */
  readonly redrive: (id: string, now: number) => Effect.Effect<Option.Option<OutboxEvent>, StorageError>
  readonly countByState: Effect.Effect<DeliveryCounts, StorageError>
}

export class OrderStore extends Context.Tag("acp/OrderStore")<OrderStore, OrderStoreService>() {}
