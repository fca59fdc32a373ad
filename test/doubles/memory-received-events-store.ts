/** In-memory `ReceivedEventsStore` (see `received-events-store.ts`), for tests and demos. */
import { Effect, Layer, Option } from "effect"
import { makeMemoryState } from "./memory-state.ts"
import {
  type ReceivedEvent,
  type ReceivedEventsStoreService,
  ReceivedEventsStore,
  type ReceivedOrder
} from "../../src/webhooks/received-events-store.ts"

interface State {
  /** In receipt order. */
  readonly events: ReadonlyArray<ReceivedEvent>
  readonly requestIds: ReadonlySet<string>
  readonly bodyHashes: ReadonlySet<string>
  readonly orders: ReadonlyMap<string, ReceivedOrder & { readonly receipt: number }>
}

const clone = <A>(value: A): A => structuredClone(value)

export const make: Effect.Effect<ReceivedEventsStoreService> = Effect.sync(() => {
  const cell = makeMemoryState<State>({ events: [], requestIds: new Set(), bodyHashes: new Set(), orders: new Map() })

  const recordEvent = (event: ReceivedEvent) =>
    cell.atomic(() =>
      Effect.sync(() => {
        const s = cell.get()
        if (s.requestIds.has(event.requestId) || s.bodyHashes.has(event.bodyHash)) return "duplicate" as const
        const orders = new Map(s.orders)
        if (!orders.has(event.orderId) || event.type !== "order_create") {
          orders.set(event.orderId, {
            orderId: event.orderId,
            status: event.status,
            lastRequestId: event.requestId,
            payload: clone(event.payload),
            updatedAt: event.receivedAt,
            receipt: s.events.length + 1
          })
        }
        cell.set({
          events: [...s.events, clone(event)],
          requestIds: new Set([...s.requestIds, event.requestId]),
          bodyHashes: new Set([...s.bodyHashes, event.bodyHash]),
          orders
        })
        return "stored" as const
      })
    )

  const strip = ({ receipt: _, ...order }: ReceivedOrder & { readonly receipt: number }): ReceivedOrder => clone(order)

  return ReceivedEventsStore.of({
    recordEvent,
    getOrder: (orderId) => cell.read((s) => Option.map(Option.fromNullable(s.orders.get(orderId)), strip)),
    listEvents: (orderId) => cell.read((s) => s.events.filter((e) => e.orderId === orderId).map(clone)),
    listOrders: (limit) =>
      cell.read((s) =>
        [...s.orders.values()]
          .sort((a, b) => b.updatedAt - a.updatedAt || b.receipt - a.receipt)
          .slice(0, Math.max(0, Math.floor(limit)))
          .map(strip)
      )
  })
})

export const MemoryReceivedEventsStore: Layer.Layer<ReceivedEventsStore> = Layer.effect(ReceivedEventsStore, make)
