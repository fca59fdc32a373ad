/**
 * The webhook receiver's storage (CONTRACT §8). An event whose Request-Id or body SHA-256 is stored is a
 * redelivery: `recordEvent` answers `duplicate` and changes nothing. An order's latest state is its last
 * stored event's, except that an `order_create` never replaces one (a late or redriven create must not
 * undo updates).
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface ReceivedEvent {
  readonly requestId: string
  readonly bodyHash: string
  readonly orderId: string
  readonly type: string
  readonly status: string
  /** The body as received, parsed JSON within `MAX_JSON_DEPTH`: re-serializing it cannot overflow. */
  readonly payload: unknown
  /** Epoch ms. */
  readonly receivedAt: number
}

export interface ReceivedOrder {
  readonly orderId: string
  readonly status: string
  readonly lastRequestId: string
  readonly payload: unknown
  /** Epoch ms. */
  readonly updatedAt: number
}

export interface ReceivedEventsStoreService {
  readonly recordEvent: (event: ReceivedEvent) => Effect.Effect<"stored" | "duplicate", StorageError>
  readonly getOrder: (orderId: string) => Effect.Effect<Option.Option<ReceivedOrder>, StorageError>
  /** In receipt order. */
  readonly listEvents: (orderId: string) => Effect.Effect<ReadonlyArray<ReceivedEvent>, StorageError>
  readonly listOrders: (limit: number) => Effect.Effect<ReadonlyArray<ReceivedOrder>, StorageError>
}

export class ReceivedEventsStore extends Context.Tag("acp/ReceivedEventsStore")<
  ReceivedEventsStore,
  ReceivedEventsStoreService
>() {}
