/**
 * Full orders (CONTRACT §8) and the sender's outbox of order events, in one service: an order change
 * and the event announcing it are one transaction. Delivery by several workers: `docs/concurrency.md`,
 * "The order-event outbox".
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { OrderEvent, OrderEventType } from "./model/order-event.ts"
import { storedEventJson, storedOrderJson } from "./model/order-json.ts"
import type { Order, OrderStatus } from "./model/order.ts"

export type DeliveryState = "pending" | "delivered" | "dead"

export interface OrderFilter {
  readonly status?: OrderStatus
  /** Exactly the order id or checkout session id, trimmed; blank means no search. */
  readonly search?: string
  /** At most this many (0 or less: none). */
  readonly limit: number
}

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

/** Times are epoch ms. */
export interface AttemptResult {
  /** `pending` schedules another attempt at `nextAttemptAt`. */
  readonly state: DeliveryState
  readonly nextAttemptAt: number
  readonly lastStatus: number | null
  readonly lastError: string | null
  readonly at: number
}

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

/** An event to queue; `now` is epoch ms. */
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
    // The event usually carries this very order: its JSON text is the order row's, made once.
    eventJson: storedEventJson(event.payload, event.payload.data === stored.order ? orderText : undefined),
    eventAt: new Date(event.now).toISOString()
  }
}

export interface OrderStoreService {
  /** Runs `effect` atomically; nested calls (and calls inside the SQL client's transaction) join. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>

  readonly getOrder: (id: string) => Effect.Effect<Option.Option<StoredFullOrder>, StorageError>
  readonly findOrderByPermalink: (token: string) => Effect.Effect<Option.Option<StoredFullOrder>, StorageError>
  /** Newest first (created_at, then id, descending); rows holding only a checkout summary are not listed. */
  readonly listOrders: (filter: OrderFilter) => Effect.Effect<ReadonlyArray<StoredFullOrder>, StorageError>
  /** Reads and locks an order for the rest of the transaction. */
  readonly lockOrder: (id: string) => Effect.Effect<Option.Option<StoredFullOrder>, StorageError>
  /** Inserts the order, or replaces the data of the order with the same id. */
  readonly saveOrder: (stored: StoredFullOrder) => Effect.Effect<void, StorageError>

  /** `saveOrder` and `enqueueEvent` as one atomic step, no surrounding transaction needed. */
  readonly saveOrderWithEvent: (
    stored: StoredFullOrder,
    event: NewOrderEvent
  ) => Effect.Effect<OutboxEvent, StorageError>
  /** Appends a pending event, the next sequence of its order: call under the order's lock or with its creation. */
  readonly enqueueEvent: (input: NewOrderEvent) => Effect.Effect<OutboxEvent, StorageError>

  /** Leases up to `limit` due, unleased events, each the lowest pending one of its order, counting the attempt. */
  readonly claimDue: (
    now: number,
    limit: number,
    leaseMs: number
  ) => Effect.Effect<ReadonlyArray<OutboxEvent>, StorageError>
  /** Records each result and ends its lease only while the event is pending under that attempt; answers which. */
  readonly finishAttempts: (
    finished: ReadonlyArray<FinishedAttempt>
  ) => Effect.Effect<ReadonlyArray<boolean>, StorageError>

  readonly getEvent: (id: string) => Effect.Effect<Option.Option<OutboxEvent>, StorageError>
  readonly listEvents: (
    filter: { readonly state?: DeliveryState; readonly orderId?: string; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<OutboxEvent>, StorageError>
  /** A dead event becomes pending, due at `now`, attempts reset (last error kept); none unless it was dead. */
  readonly redrive: (id: string, now: number) => Effect.Effect<Option.Option<OutboxEvent>, StorageError>
  readonly countByState: Effect.Effect<DeliveryCounts, StorageError>
}

export class OrderStore extends Context.Tag("acp/OrderStore")<OrderStore, OrderStoreService>() {}
