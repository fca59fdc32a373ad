/**
 * Publishing the merchant's products to an agent-hosted Feed API (`FEED_API_URL`): the feed made
 * there, and per product what was last pushed (a hash of the feed `Product` sent) and how its push
 * fares. Rows are derived from the products' committed state, so nothing a crash interrupts is lost:
 * a product whose current form differs from its pushed hash is due until a push records it. A product
 * is pushed by one process at a time (a lease), always in its latest form, so pushes of one product
 * never overtake each other.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface Publication {
  /** The Feed API the feed lives at: another URL is another publication. */
  readonly apiUrl: string
  readonly feedId: string
  readonly targetCountry: string | undefined
  readonly createdAt: number
}

export interface PushState {
  readonly productId: string
  /** The hash of the last product form the Feed API accepted; none before the first. */
  readonly pushedHash: string | undefined
  readonly pushedAt: number | undefined
  /** Failed pushes since the last accepted one. */
  readonly attempts: number
  /** Not before then (a backoff after a failure). */
  readonly nextAttemptAt: number | undefined
  readonly lastError: string | undefined
  /** Dead-lettered: not pushed again until a merchant retries it. */
  readonly deadAt: number | undefined
}

export interface PushFailure {
  readonly message: string
  /** When the next push may be tried; none dead-letters the products. */
  readonly nextAttemptAt: number | undefined
}

export interface FeedPublicationStoreService {
  readonly publication: (apiUrl: string) => Effect.Effect<Option.Option<Publication>, StorageError>
  /**
   * Whether this caller may create the remote feed now: none is recorded and no other caller claimed
   * the creation within `leaseMs` (a creator that died loses its claim).
   */
  readonly claimCreation: (apiUrl: string, now: number, leaseMs: number) => Effect.Effect<boolean, StorageError>
  readonly savePublication: (publication: Publication) => Effect.Effect<void, StorageError>
  /** Forgets the feed (the Feed API no longer has it) and every push record: the next cycle starts over. */
  readonly dropPublication: (apiUrl: string) => Effect.Effect<void, StorageError>
  readonly states: (apiUrl: string) => Effect.Effect<ReadonlyArray<PushState>, StorageError>
  /** Of `productIds`, those no other pusher holds, now held by this one until `now + leaseMs`. */
  readonly claim: (
    apiUrl: string,
    productIds: ReadonlyArray<string>,
    now: number,
    leaseMs: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /** Accepted by the Feed API: the hashes recorded, failures cleared, the leases released. */
  readonly pushed: (
    apiUrl: string,
    pushed: ReadonlyArray<{ readonly productId: string; readonly hash: string }>,
    now: number
  ) => Effect.Effect<void, StorageError>
  /** Not accepted: one more attempt counted, the leases released. */
  readonly failed: (
    apiUrl: string,
    productIds: ReadonlyArray<string>,
    failure: PushFailure,
    now: number
  ) => Effect.Effect<void, StorageError>
  /** The dead-lettered products (or those named) due again, their attempts reset; how many. */
  readonly retry: (apiUrl: string, productIds?: ReadonlyArray<string>) => Effect.Effect<number, StorageError>
}

export class FeedPublicationStore extends Context.Tag("acp/FeedPublicationStore")<
  FeedPublicationStore,
  FeedPublicationStoreService
>() {}
