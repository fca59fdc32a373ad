/**
 * The webhook receiver's storage (CONTRACT §8): every accepted order event, and the latest state
 * per order.
 *
 * - An event is identified by its Request-Id and by the SHA-256 of its raw body; a second event
 *   with either already stored is a redelivery: `recordEvent` answers `duplicate` and changes
 *   nothing.
 * - The latest state of an order is the data of the last *stored* event (receipt order), except
 *   that an `order_create` never replaces a state already recorded for the order (a late or
 *   redriven create must not undo updates). The sender delivers the events of one order in order,
 *   so receipt order is the order of the changes unless an event was dead-lettered and redriven.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface ReceivedEvent {
  readonly requestId: string
  readonly bodyHash: string
  readonly orderId: string
  readonly type: string
  readonly status: string
  /**
   * The whole event body as received (parsed JSON), nested at most `MAX_JSON_DEPTH` levels deep
   * (`parseWebhookJson`): a store may re-serialize it (`JSON.stringify` cannot overflow on it).
   */
  readonly payload: unknown
  /** Epoch ms. */
  readonly receivedAt: number
}

export interface ReceivedOrder {
  readonly orderId: string
  readonly status: string
  readonly lastRequestId: string
  /** The event body that set this state. */
  readonly payload: unknown
  /** Epoch ms. */
  readonly updatedAt: number
}

export interface ReceivedEventsStoreService {
  readonly recordEvent: (event: ReceivedEvent) => Effect.Effect<"stored" | "duplicate", StorageError>
  readonly getOrder: (orderId: string) => Effect.Effect<Option.Option<ReceivedOrder>, StorageError>
  /** The events of one order in receipt order. */
  readonly listEvents: (orderId: string) => Effect.Effect<ReadonlyArray<ReceivedEvent>, StorageError>
  /** Orders, most recently updated first. */
  readonly listOrders: (limit: number) => Effect.Effect<ReadonlyArray<ReceivedOrder>, StorageError>
}

export class ReceivedEventsStore extends Context.Tag("acp/ReceivedEventsStore")<
  ReceivedEventsStore,
  ReceivedEventsStoreService
>() {}
