/**
 * In-memory `OrderStore`, for tests and for running without a database. Same semantics as the SQL
 * store (see `order-store.ts`). Inside a memory checkout transaction its writes are not undone if
 * that outer transaction fails later (the two memory stores have separate state); in SQL they are.
 */
import { Effect, Layer, Option } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { makeMemoryState } from "./memory-state.ts"
import {
  type DeliveryCounts,
  type OutboxEvent,
  OrderStore,
  pendingEvent,
  type OrderStoreService,
  type StoredFullOrder
} from "../../src/orders/order-store.ts"

interface Row {
  readonly event: OutboxEvent
  readonly lockedUntil: number | null
  /** Insertion counter, for "newest first". */
  readonly position: number
}

interface State {
  readonly orders: ReadonlyMap<string, StoredFullOrder>
  readonly events: ReadonlyMap<string, Row>
  readonly position: number
}

const clone = <A>(value: A): A => structuredClone(value)

const failure = (message: string) => new StorageError({ reason: "failure", cause: new Error(message) })

export const make: Effect.Effect<OrderStoreService> = Effect.sync(() => {
  const cell = makeMemoryState<State>({ orders: new Map(), events: new Map(), position: 0 })

  const getOrder = (id: string) => cell.read((s) => Option.map(Option.fromNullable(s.orders.get(id)), clone))

  const saveOrder = (stored: StoredFullOrder) =>
    cell.atomic(() =>
      Effect.sync(() => {
        const s = cell.get()
        const existing = s.orders.get(stored.order.id)
        const orders = new Map(s.orders)
        orders.set(stored.order.id, clone(existing ? { ...existing, order: stored.order } : stored))
        cell.set({ ...s, orders })
      })
    )

  const enqueueEvent: OrderStoreService["enqueueEvent"] = ({ id, now, payload }) =>
    cell.atomic(() => {
      const s = cell.get()
      if (s.events.has(id)) return Effect.fail(failure(`duplicate event id ${id}`))
      const orderId = payload.data.id
      let sequence = 0
      for (const row of s.events.values()) {
        if (row.event.orderId === orderId) sequence = Math.max(sequence, row.event.sequence)
      }
      const event = pendingEvent({ id, now, payload: clone(payload) }, sequence + 1)
      const events = new Map(s.events)
      events.set(id, { event, lockedUntil: null, position: s.position + 1 })
      cell.set({ ...s, events, position: s.position + 1 })
      return Effect.succeed(clone(event))
    })

  const saveOrderWithEvent: OrderStoreService["saveOrderWithEvent"] = (stored, event) =>
    cell.transaction(Effect.zipRight(saveOrder(stored), enqueueEvent(event)))

  const claimDue: OrderStoreService["claimDue"] = (now, limit, leaseMs) =>
    cell.atomic(() =>
      Effect.sync(() => {
        const s = cell.get()
        const lowestPending = new Map<string, number>()
        for (const { event } of s.events.values()) {
          if (event.state !== "pending") continue
          const lowest = lowestPending.get(event.orderId)
          if (lowest === undefined || event.sequence < lowest) lowestPending.set(event.orderId, event.sequence)
        }
        const due = [...s.events.values()]
          .filter(({ event, lockedUntil }) =>
            event.state === "pending" && event.nextAttemptAt <= now &&
            (lockedUntil === null || lockedUntil <= now) && lowestPending.get(event.orderId) === event.sequence
          )
          .sort((a, b) => a.event.nextAttemptAt - b.event.nextAttemptAt || a.position - b.position)
          .slice(0, Math.max(0, Math.floor(limit)))
        if (due.length === 0) return []
        const events = new Map(s.events)
        const claimed = due.map((row) => {
          const event: OutboxEvent = {
            ...row.event,
            attempts: row.event.attempts + 1,
            firstAttemptAt: row.event.firstAttemptAt ?? now
          }
          events.set(event.id, { ...row, event, lockedUntil: now + leaseMs })
          return clone(event)
        })
        cell.set({ ...s, events })
        return claimed
      })
    )

  const finishAttempts: OrderStoreService["finishAttempts"] = (finished) =>
    cell.atomic(() =>
      Effect.sync(() => {
        const s = cell.get()
        const events = new Map(s.events)
        const recorded = finished.map(({ attempt, id, result }) => {
          const row = events.get(id)
          if (row === undefined || row.event.state !== "pending" || row.event.attempts !== attempt) return false
          const event: OutboxEvent = {
            ...row.event,
            state: result.state,
            nextAttemptAt: result.nextAttemptAt,
            lastStatus: result.lastStatus,
            lastError: result.lastError,
            deliveredAt: result.state === "delivered" ? result.at : row.event.deliveredAt
          }
          events.set(id, { ...row, event, lockedUntil: null })
          return true
        })
        cell.set({ ...s, events })
        return recorded
      })
    )

  const getEvent = (id: string) =>
    cell.read((s) => Option.map(Option.fromNullable(s.events.get(id)), (row) => clone(row.event)))

  const listEvents: OrderStoreService["listEvents"] = (filter) =>
    cell.read((s) =>
      [...s.events.values()]
        .filter(({ event }) =>
          (filter.state === undefined || event.state === filter.state) &&
          (filter.orderId === undefined || event.orderId === filter.orderId)
        )
        .sort((a, b) => b.event.createdAt - a.event.createdAt || b.position - a.position)
        .slice(0, Math.max(0, Math.floor(filter.limit)))
        .map((row) => clone(row.event))
    )

  const redrive: OrderStoreService["redrive"] = (id, now) =>
    cell.atomic(() =>
      Effect.sync(() => {
        const s = cell.get()
        const row = s.events.get(id)
        if (row === undefined || row.event.state !== "dead") return Option.none<OutboxEvent>()
        const event: OutboxEvent = { ...row.event, state: "pending", attempts: 0, firstAttemptAt: null, nextAttemptAt: now }
        const events = new Map(s.events)
        events.set(id, { ...row, event, lockedUntil: null })
        cell.set({ ...s, events })
        return Option.some(clone(event))
      })
    )

  const countByState = cell.read((s) => {
    const counts = { pending: 0, delivered: 0, dead: 0 }
    for (const { event } of s.events.values()) counts[event.state]++
    return counts as DeliveryCounts
  })

  return OrderStore.of({
    transaction: cell.transaction,
    getOrder,
    lockOrder: getOrder,
    saveOrder,
    enqueueEvent,
    saveOrderWithEvent,
    claimDue,
    finishAttempts,
    getEvent,
    listEvents,
    redrive,
    countByState
  })
})

/** A fresh, empty in-memory order store. */
export const MemoryOrderStore: Layer.Layer<OrderStore> = Layer.effect(OrderStore, make)
