/**
 * The hosted Feed API's storage: feeds and each feed's current products, one row per (feed, product id).
 * A product is kept as the JSON it was validated as; an upsert replaces whole products and leaves the
 * others as they were. Products are listed in the order their ids were first upserted.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface Feed {
  readonly id: string
  /** The API key that created it (`Client.keyId`): only that key sees it. */
  readonly ownerKeyId: string
  readonly targetCountry: string | undefined
  /** Epoch ms of the creation or of the last upsert, never moving back. */
  readonly updatedAt: number
}

export interface FeedProductRecord {
  readonly productId: string
  /** A `Product` of the feed wire format, validated; parsed JSON within the depth bound. */
  readonly product: unknown
}

export type UpsertOutcome =
  | { readonly _tag: "Upserted"; readonly feed: Feed }
  | { readonly _tag: "FeedNotFound" }
  /** The feed would hold more than `maxProducts`: nothing is written. */
  | { readonly _tag: "TooManyProducts"; readonly maxProducts: number }

export interface FeedStoreService {
  /** Runs `effect` atomically; nested calls join. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  readonly createFeed: (feed: Feed) => Effect.Effect<void, StorageError>
  readonly getFeed: (id: string) => Effect.Effect<Option.Option<Feed>, StorageError>
  /** Every product of the feed, in first-upsert order. */
  readonly listProducts: (feedId: string) => Effect.Effect<ReadonlyArray<unknown>, StorageError>
  /** One atomic step: the products inserted or replaced by id, the feed's `updatedAt` set to at least `now`. */
  readonly upsertProducts: (
    feedId: string,
    products: ReadonlyArray<FeedProductRecord>,
    now: number,
    maxProducts: number
  ) => Effect.Effect<UpsertOutcome, StorageError>
}

export class FeedStore extends Context.Tag("acp/FeedStore")<FeedStore, FeedStoreService>() {}
