/**
 * In-memory `CartStore`, for tests: the `carts` table of a `MemoryDatabase`, each operation one atomic
 * call. Same semantics as the SQL store (expired is absent; a duplicate id or hand-off hash fails).
 */
import { Effect, Layer, Option } from "effect"
import { CartStore, type CartStoreService } from "../../src/carts/cart-store.ts"
import type { Cart } from "../../src/carts/model/cart.ts"
import { MemoryDatabase, storageFailure } from "./memory-database.ts"

export const make: Effect.Effect<CartStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const carts = db.table<string, Cart>("carts")
  const live = (id: string, now: number) =>
    Option.filter(Option.fromNullable(carts.get(id)), (cart) => cart.expiresAt > now)
  const copy = (cart: Cart): Cart => structuredClone(cart)
  return CartStore.of({
    insert: (cart) =>
      db.atomic(() => {
        if (carts.has(cart.id) || [...carts.values()].some((c) => c.handoffToken === cart.handoffToken)) {
          return Effect.fail(storageFailure("duplicate cart"))
        }
        carts.set(cart.id, copy(cart))
        return Effect.void
      }),
    find: (id, now) => db.sync(() => Option.map(live(id, now), copy)),
    findByHandoff: (handoffToken, now) =>
      db.sync(() =>
        Option.map(
          Option.fromNullable([...carts.values()].find((c) => c.handoffToken === handoffToken && c.expiresAt > now)),
          copy
        )
      ),
    replace: (id, replacement, now) =>
      db.sync(() =>
        Option.map(live(id, now), (cart) => {
          const next: Cart = { ...cart, ...copy({ ...cart, ...replacement }) }
          carts.set(id, next)
          return copy(next)
        })
      ),
    remove: (id, now) =>
      db.sync(() =>
        Option.map(live(id, now), (cart) => {
          carts.delete(id)
          return copy(cart)
        })
      ),
    countCheckout: (id, now) =>
      db.sync(() =>
        Option.match(live(id, now), {
          onNone: () => false,
          onSome: (cart) => {
            carts.set(id, { ...cart, checkouts: cart.checkouts + 1 })
            return true
          }
        })
      ),
    list: (now, limit) =>
      db.sync(() =>
        [...carts.values()].filter((cart) => cart.expiresAt > now)
          .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1))
          .slice(0, limit).map(copy)
      ),
    counts: (now) =>
      db.sync(() => {
        const unexpired = [...carts.values()].filter((cart) => cart.expiresAt > now)
        return { carts: unexpired.length, withCheckout: unexpired.filter((cart) => cart.checkouts > 0).length }
      }),
    removeExpired: (now, limit) =>
      db.sync(() => {
        const due = [...carts.values()].filter((cart) => cart.expiresAt <= now)
          .sort((a, b) => a.expiresAt - b.expiresAt).slice(0, limit)
        for (const cart of due) carts.delete(cart.id)
        return due.length
      })
  })
})

export const MemoryCartStore: Layer.Layer<CartStore, never, MemoryDatabase> = Layer.effect(CartStore, make)
