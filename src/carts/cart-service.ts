/**
 * The carts' use cases. Time is Effect's Clock only; a cart is priced afresh on every read from the
 * catalog of `currentCatalog` and the stock levels of the moment (a cart reserves nothing).
 */
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { Catalog } from "../catalog/catalog-service.ts"
import type { CatalogSnapshot } from "../catalog/model/catalog.ts"
import { CheckoutService } from "../checkout/checkout-service.ts"
import { CheckoutStore } from "../checkout/checkout-store.ts"
import { lineItemId } from "../checkout/session/draft.ts"
import type { ReducerError, Session } from "../checkout/session/session.ts"
import type { StorageError } from "../db/storage-error.ts"
import { AppConfig } from "../platform/config.ts"
import { Ids } from "../platform/ids.ts"
import { CartStore } from "./cart-store.ts"
import type { Cart, CartContents } from "./model/cart.ts"
import { type CartEstimate, estimateCart } from "./model/estimate.ts"

export class CartNotFound extends Data.TaggedError("CartNotFound")<{ readonly id: string }> {}

/** Every item is unknown or out of stock: the cart is neither created nor changed. */
export class NothingAvailable extends Data.TaggedError("NothingAvailable")<{}> {}

export interface PricedCart {
  readonly cart: Cart
  readonly estimate: CartEstimate
}

export interface CartOverview {
  readonly carts: ReadonlyArray<PricedCart>
  readonly total: number
  readonly withCheckout: number
}

export interface CartServiceShape {
  readonly create: (
    contents: CartContents,
    locale: string | undefined
  ) => Effect.Effect<PricedCart, NothingAvailable | StorageError>
  readonly get: (id: string) => Effect.Effect<PricedCart, CartNotFound | StorageError>
  /** Replaces items and buyer and refreshes `expires_at`; concurrent replacements: the last wins. */
  readonly replace: (
    id: string,
    contents: CartContents
  ) => Effect.Effect<PricedCart, CartNotFound | NothingAvailable | StorageError>
  /** Deletes the cart, answering it as it was. */
  readonly cancel: (id: string) => Effect.Effect<PricedCart, CartNotFound | StorageError>
  /** The cart behind a `continue_url` token. */
  readonly byHandoff: (token: string) => Effect.Effect<PricedCart, CartNotFound | StorageError>
  /** A checkout session of the cart's items, started by the buyer page; counted on the cart. */
  readonly startCheckout: (
    token: string
  ) => Effect.Effect<Session, CartNotFound | ReducerError | StorageError>
  readonly overview: (limit: number) => Effect.Effect<CartOverview, StorageError>
  /** Deletes at most `limit` expired carts; how many. */
  readonly expireDue: (limit: number) => Effect.Effect<number, StorageError>
}

export class CartService extends Context.Tag("acp/CartService")<CartService, CartServiceShape>() {}

export const CartServiceLive = Layer.effect(
  CartService,
  Effect.gen(function*() {
    const store = yield* CartStore
    const checkoutStore = yield* CheckoutStore
    const checkout = yield* CheckoutService
    const ids = yield* Ids
    const config = yield* AppConfig
    const catalog = yield* Catalog
    /** The one place carts read the catalog. */
    const currentCatalog: Effect.Effect<CatalogSnapshot> = catalog.current
    const ttlMillis = config.cartTtlSeconds * 1000

    const availableNow = (now: number) =>
      Effect.map(
        checkoutStore.inventory.stockLevels(now),
        (levels) => new Map(levels.map((level) => [level.productId, Math.max(0, level.onHand - level.reserved)]))
      )

    const priced = (cart: Cart, now: number): Effect.Effect<PricedCart, StorageError> =>
      estimateOf(cart.id, cart.items, now).pipe(Effect.map((estimate) => ({ cart, estimate })))

    const estimateOf = (id: string, items: Cart["items"], now: number) =>
      Effect.zipWith(currentCatalog, availableNow(now), (snapshot, available) => {
        const occurrences = new Map<string, number>()
        const lineIds = items.map((item) => {
          const n = occurrences.get(item.id) ?? 0
          occurrences.set(item.id, n + 1)
          return lineItemId(id, item.id, n)
        })
        return estimateCart({ items, catalog: snapshot, available, address: undefined, lineId: (i) => lineIds[i]! })
      })

    const found = <A>(id: string) => (option: Option.Option<A>) =>
      Option.match(option, { onNone: () => Effect.fail(new CartNotFound({ id })), onSome: Effect.succeed })

    const get = (id: string) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => Effect.flatMap(Effect.flatMap(store.find(id, now), found(id)), (cart) => priced(cart, now))
      )

    return CartService.of({
      create: Effect.fnUntraced(function*(contents, locale) {
        const now = yield* Clock.currentTimeMillis
        const id = yield* ids.make("cart_")
        const estimate = yield* estimateOf(id, contents.items, now)
        if (estimate.nothingAvailable) return yield* new NothingAvailable()
        const cart: Cart = {
          id,
          items: contents.items,
          buyer: contents.buyer,
          locale,
          handoffToken: yield* ids.make(""),
          checkouts: 0,
          createdAt: now,
          updatedAt: now,
          expiresAt: now + ttlMillis
        }
        yield* store.insert(cart)
        return { cart, estimate }
      }),
      get,
      replace: Effect.fnUntraced(function*(id, contents) {
        const now = yield* Clock.currentTimeMillis
        const estimate = yield* estimateOf(id, contents.items, now)
        if (estimate.nothingAvailable) {
          // A missing cart is 404 whatever its new items.
          yield* Effect.flatMap(store.find(id, now), found(id))
          return yield* new NothingAvailable()
        }
        const cart = yield* Effect.flatMap(
          store.replace(id, { ...contents, updatedAt: now, expiresAt: now + ttlMillis }, now),
          found(id)
        )
        return { cart, estimate }
      }),
      cancel: (id) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) => Effect.flatMap(Effect.flatMap(store.remove(id, now), found(id)), (cart) => priced(cart, now))
        ),
      byHandoff: (token) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) =>
            Effect.flatMap(
              Effect.flatMap(store.findByHandoff(token, now), found("")),
              (cart) => priced(cart, now)
            )
        ),
      startCheckout: Effect.fnUntraced(function*(token) {
        const now = yield* Clock.currentTimeMillis
        const cart = yield* Effect.flatMap(store.findByHandoff(token, now), found(""))
        const session = yield* checkout.create({ items: cart.items })
        yield* store.countCheckout(cart.id, now)
        return session
      }),
      overview: Effect.fnUntraced(function*(limit) {
        const now = yield* Clock.currentTimeMillis
        const counts = yield* store.counts(now)
        const carts = yield* Effect.forEach(yield* store.list(now, limit), (cart) => priced(cart, now))
        return { carts, total: counts.carts, withCheckout: counts.withCheckout }
      }),
      expireDue: (limit) => Effect.flatMap(Clock.currentTimeMillis, (now) => store.removeExpired(now, limit))
    })
  })
)
