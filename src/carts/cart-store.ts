/**
 * The carts port. Times are epoch ms of the caller's clock (never the database's), so that every process
 * and test agrees on expiry: a cart whose `expiresAt` is at or before `now` is absent to every operation.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { Cart, CartContents } from "./model/cart.ts"

export interface CartReplacement extends CartContents {
  readonly updatedAt: number
  readonly expiresAt: number
}

export interface CartStoreService {
  /** Stores a new cart; an id or hand-off token already stored fails. */
  readonly insert: (cart: Cart) => Effect.Effect<void, StorageError>
  readonly find: (id: string, now: number) => Effect.Effect<Option.Option<Cart>, StorageError>
  readonly findByHandoff: (token: string, now: number) => Effect.Effect<Option.Option<Cart>, StorageError>
  /** Replaces items and buyer in one statement (the last write wins); none when absent. */
  readonly replace: (
    id: string,
    replacement: CartReplacement,
    now: number
  ) => Effect.Effect<Option.Option<Cart>, StorageError>
  /** Deletes the cart, answering it as it was; none when absent. */
  readonly remove: (id: string, now: number) => Effect.Effect<Option.Option<Cart>, StorageError>
  /** Counts one checkout started from the cart; false when absent. */
  readonly countCheckout: (id: string, now: number) => Effect.Effect<boolean, StorageError>
  /** Newest first, at most `limit`, unexpired only. */
  readonly list: (now: number, limit: number) => Effect.Effect<ReadonlyArray<Cart>, StorageError>
  /** Unexpired carts, and how many of them started at least one checkout. */
  readonly counts: (now: number) => Effect.Effect<CartCounts, StorageError>
  /** Deletes at most `limit` expired carts, answering how many. */
  readonly removeExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
}

export interface CartCounts {
  readonly carts: number
  readonly withCheckout: number
}

export class CartStore extends Context.Tag("acp/CartStore")<CartStore, CartStoreService>() {}
