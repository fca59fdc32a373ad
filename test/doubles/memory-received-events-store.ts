/**
 * In-memory `ReceivedEventsStore` (see `received-events-store.ts`): the `received_events` and
 * `received_orders` tables of a `MemoryDatabase`.
 */
import { Effect, Layer, Option } from "effect"
import {
  type ReceivedEvent,
  ReceivedEventsStore,
  type ReceivedEventsStoreService,
  type ReceivedOrder
} from "../../src/webhook-receiver/received-events-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

type Receipt = { readonly receipt: number }

const clone = <A>(value: A): A => structuredClone(value)

export const make: Effect.Effect<ReceivedEventsStoreService, never, MemoryDatabase> = Effect.map(
  MemoryDatabase,
  (db) => {
    const events = db.table<string, ReceivedEvent & Receipt>("received_events")
    /** Body hash → Request-Id: both are unique. */
    const bodyHashes = db.table<string, string>("received_event_hashes")
    const orders = db.table<string, ReceivedOrder & Receipt>("received_orders")
    const counters = db.table<string, number>("counters")

    const recordEvent = (event: ReceivedEvent) =>
      db.sync(() => {
        if (events.has(event.requestId) || bodyHashes.has(event.bodyHash)) return "duplicate" as const
        const receipt = (counters.get("received_events") ?? 0) + 1
        counters.set("received_events", receipt)
        events.set(event.requestId, { ...clone(event), receipt })
        bodyHashes.set(event.bodyHash, event.requestId)
        if (!orders.has(event.orderId) || event.type !== "order_create") {
          orders.set(event.orderId, {
            orderId: event.orderId,
            status: event.status,
            lastRequestId: event.requestId,
            payload: clone(event.payload),
            updatedAt: event.receivedAt,
            receipt
          })
        }
        return "stored" as const
      })

    const withoutReceipt = <A extends Receipt>({ receipt: _, ...row }: A): Omit<A, "receipt"> => clone(row)

    return ReceivedEventsStore.of({
      recordEvent,
      getOrder: (orderId) => db.sync(() => Option.map(Option.fromNullable(orders.get(orderId)), withoutReceipt)),
      listEvents: (orderId) =>
        db.sync(() =>
          [...events.values()].filter((e) => e.orderId === orderId).sort((a, b) => a.receipt - b.receipt).map(
            withoutReceipt
          )
        ),
      listOrders: (limit) =>
        db.sync(() =>
          [...orders.values()]
            .sort((a, b) => b.updatedAt - a.updatedAt || b.receipt - a.receipt)
            .slice(0, Math.max(0, Math.floor(limit)))
            .map(withoutReceipt)
        )
    })
  }
)

/** The memory received-events store on the `MemoryDatabase` in context. */
export const MemoryReceivedEventsStore: Layer.Layer<ReceivedEventsStore, never, MemoryDatabase> = Layer.effect(
  ReceivedEventsStore,
  make
)
