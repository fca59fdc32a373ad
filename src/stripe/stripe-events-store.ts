/**
 * The Stripe events this service has acted on, each once: an event id is recorded in the same
 * transaction as the change it causes, so a redelivery (Stripe delivers at least once, and may
 * deliver twice at the same time) finds it recorded and changes nothing, and a change that failed
 * left no record, so Stripe's next delivery tries again.
 */
import { Context, type Effect } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface ReceivedStripeEvent {
  /** `evt_…` */
  readonly id: string
  readonly type: string
  /** The id of the event's object (`ch_…`, `dp_…`, `pi_…`), for the record. */
  readonly objectId: string | undefined
  /** Epoch ms. */
  readonly receivedAt: number
  /** What it changed, for the record (`refunds recorded on ord_…`, `ignored`). */
  readonly outcome: string
}

export interface StripeEventsStoreService {
  /** Nested calls (and calls inside the SQL client's transaction) join. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** Whether the event is recorded (a redelivery needs nothing asked of Stripe). */
  readonly has: (id: string) => Effect.Effect<boolean, StorageError>
  /** Records the event unless its id is; true if this call recorded it (a concurrent one waits for the first). */
  readonly record: (event: ReceivedStripeEvent) => Effect.Effect<boolean, StorageError>
}

export class StripeEventsStore extends Context.Tag("acp/StripeEventsStore")<
  StripeEventsStore,
  StripeEventsStoreService
>() {}
