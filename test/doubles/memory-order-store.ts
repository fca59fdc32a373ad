/**
 * In-memory `OrderStore`, for tests: the `orders` and `webhook_outbox` tables of a
 * `MemoryDatabase`. Same semantics as the SQL store (see `order-store.ts`); on the same database
 * as the memory checkout store, a completion's order is undone with the completion.
 */
import { Effect, Layer, Option } from "effect"
import type { StorageError } from "../../src/db/storage-error.ts"
import { permalinkTokenOf } from "../../src/orders/model/order-permalink.ts"
import {
  type DeliveryCounts,
  type NewOrderEvent,
  OrderStore,
  type OrderStoreService,
  type OutboxEvent,
  pendingEvent,
  searchTerm,
  type StoredFullOrder
} from "../../src/orders/order-store.ts"
import { MemoryDatabase, type MemoryDatabaseService, storageFailure } from "./memory-database.ts"

interface OutboxRow {
  readonly event: OutboxEvent
  readonly lockedUntil: number | null
  /** Insertion counter, for "newest first". */
  readonly position: number
}

const clone = <A>(value: A): A => structuredClone(value)

const tablesOf = (db: MemoryDatabaseService) => ({
  orders: db.table<string, StoredFullOrder>("orders"),
  outbox: db.table<string, OutboxRow>("webhook_outbox"),
  counters: db.table<string, number>("counters")
})

/** Appends the event with the next sequence of its order (`enqueueEvent`), on `db`'s tables. */
const queueEvent = (db: MemoryDatabaseService, event: NewOrderEvent): Effect.Effect<OutboxEvent, StorageError> =>
  db.atomic(() => {
    const { counters, outbox } = tablesOf(db)
    if (outbox.has(event.id)) return Effect.fail(storageFailure(`duplicate event id ${event.id}`))
    const orderId = event.payload.data.id
    let sequence = 0
    for (const row of outbox.values()) {
      if (row.event.orderId === orderId) sequence = Math.max(sequence, row.event.sequence)
    }
    const position = (counters.get("webhook_outbox") ?? 0) + 1
    counters.set("webhook_outbox", position)
    const pending = pendingEvent({ ...event, payload: clone(event.payload) }, sequence + 1)
    outbox.set(event.id, { event: pending, lockedUntil: null, position })
    return Effect.succeed(clone(pending))
  })

/** Inserts the order, or replaces the data of the order with the same id (`saveOrder`). */
const writeOrder = (db: MemoryDatabaseService, stored: StoredFullOrder): void => {
  const { orders } = tablesOf(db)
  const existing = orders.get(stored.order.id)
  orders.set(stored.order.id, clone(existing ? { ...existing, order: stored.order } : stored))
}

/**
 * `saveOrderWithEvent` on `db`'s tables, all or nothing. The memory checkout store's completion
 * calls it too, as the SQL completion calls `order_save_with_event`.
 */
export const saveOrderWithEvent = (
  db: MemoryDatabaseService,
  stored: StoredFullOrder,
  event: NewOrderEvent
): Effect.Effect<OutboxEvent, StorageError> =>
  db.atomic(() => Effect.zipRight(Effect.sync(() => writeOrder(db, stored)), queueEvent(db, event)))

export const make: Effect.Effect<OrderStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const { orders, outbox } = tablesOf(db)

  const getOrder = (id: string) => db.sync(() => Option.map(Option.fromNullable(orders.get(id)), clone))
  const findOrderByPermalink = (token: string) =>
    db.sync(() =>
      Option.map(
        Option.fromNullable(
          [...orders.values()].find((stored) => permalinkTokenOf(stored.order.permalink_url) === token)
        ),
        clone
      )
    )

  // Only full orders are ever written here: there are no summary-only rows to skip.
  const listOrders: OrderStoreService["listOrders"] = (filter) =>
    db.sync(() => {
      const search = searchTerm(filter)
      return [...orders.values()]
        .filter((stored) =>
          (filter.status === undefined || stored.order.status === filter.status) &&
          (search === undefined || stored.order.id === search || stored.sessionId === search)
        )
        .sort((a, b) => b.createdAt - a.createdAt || (a.order.id < b.order.id ? 1 : a.order.id > b.order.id ? -1 : 0))
        .slice(0, Math.max(0, Math.floor(filter.limit)))
        .map(clone)
    })

  const claimDue: OrderStoreService["claimDue"] = (now, limit, leaseMs) =>
    db.sync(() => {
      const lowestPending = new Map<string, number>()
      for (const { event } of outbox.values()) {
        if (event.state !== "pending") continue
        const lowest = lowestPending.get(event.orderId)
        if (lowest === undefined || event.sequence < lowest) lowestPending.set(event.orderId, event.sequence)
      }
      return [...outbox.values()]
        .filter(({ event, lockedUntil }) =>
          event.state === "pending" && event.nextAttemptAt <= now &&
          (lockedUntil === null || lockedUntil <= now) && lowestPending.get(event.orderId) === event.sequence
        )
        .sort((a, b) => a.event.nextAttemptAt - b.event.nextAttemptAt || a.position - b.position)
        .slice(0, Math.max(0, Math.floor(limit)))
        .map((row) => {
          const event: OutboxEvent = {
            ...row.event,
            attempts: row.event.attempts + 1,
            firstAttemptAt: row.event.firstAttemptAt ?? now
          }
          outbox.set(event.id, { ...row, event, lockedUntil: now + leaseMs })
          return clone(event)
        })
    })

  const finishAttempts: OrderStoreService["finishAttempts"] = (finished) =>
    db.sync(() =>
      finished.map(({ attempt, id, result }) => {
        const row = outbox.get(id)
        if (row === undefined || row.event.state !== "pending" || row.event.attempts !== attempt) return false
        const event: OutboxEvent = {
          ...row.event,
          state: result.state,
          nextAttemptAt: result.nextAttemptAt,
          lastStatus: result.lastStatus,
          lastError: result.lastError,
          deliveredAt: result.state === "delivered" ? result.at : row.event.deliveredAt
        }
        outbox.set(id, { ...row, event, lockedUntil: null })
        return true
      })
    )

  const getEvent = (id: string) =>
    db.sync(() => Option.map(Option.fromNullable(outbox.get(id)), (row) => clone(row.event)))

  const listEvents: OrderStoreService["listEvents"] = (filter) =>
    db.sync(() =>
      [...outbox.values()]
        .filter(({ event }) =>
          (filter.state === undefined || event.state === filter.state) &&
          (filter.orderId === undefined || event.orderId === filter.orderId)
        )
        .sort((a, b) => b.event.createdAt - a.event.createdAt || b.position - a.position)
        .slice(0, Math.max(0, Math.floor(filter.limit)))
        .map((row) => clone(row.event))
    )

  const redrive: OrderStoreService["redrive"] = (id, now) =>
    db.sync(() => {
      const row = outbox.get(id)
      if (row === undefined || row.event.state !== "dead") return Option.none<OutboxEvent>()
      const event: OutboxEvent = {
        ...row.event,
        state: "pending",
        attempts: 0,
        firstAttemptAt: null,
        nextAttemptAt: now
      }
      outbox.set(id, { ...row, event, lockedUntil: null })
      return Option.some(clone(event))
    })

  const countByState = db.sync(() => {
    const counts = { pending: 0, delivered: 0, dead: 0 }
    for (const { event } of outbox.values()) counts[event.state]++
    return counts as DeliveryCounts
  })

  return OrderStore.of({
    transaction: db.transaction,
    getOrder,
    findOrderByPermalink,
    listOrders,
    lockOrder: getOrder,
    saveOrder: (stored) => db.sync(() => writeOrder(db, stored)),
    enqueueEvent: (event) => queueEvent(db, event),
    saveOrderWithEvent: (stored, event) => saveOrderWithEvent(db, stored, event),
    claimDue,
    finishAttempts,
    getEvent,
    listEvents,
    redrive,
    countByState
  })
})

/** The memory order store on the `MemoryDatabase` in context. */
export const MemoryOrderStore: Layer.Layer<OrderStore, never, MemoryDatabase> = Layer.effect(OrderStore, make)
