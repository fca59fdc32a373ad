/**
 * The contract of `CartStore`, run against every implementation. Each case uses its own ids and tokens,
 * and the sweep's case times far in the past, so the cases share one store.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { CartStore } from "../../src/carts/cart-store.ts"
import type { Cart } from "../../src/carts/model/cart.ts"
import { randomId } from "../../src/platform/ids.ts"

const T0 = Date.parse("2026-04-20T12:00:00.000Z")
const HOUR = 3_600_000

const newCart = (createdAt: number, expiresAt: number, overrides: Partial<Cart> = {}): Cart => ({
  id: randomId("cart_"),
  items: [{ id: "tshirt-classic", quantity: 2 }, { id: "no-such-item", quantity: 1 }],
  buyer: { email: "buyer@example.com", first_name: "Ada" },
  locale: "en-US",
  handoffToken: randomId(""),
  checkouts: 0,
  createdAt,
  updatedAt: createdAt,
  expiresAt,
  ...overrides
})

export const cartStoreContract = (name: string, store: Layer.Layer<CartStore, unknown>) =>
  layer(store, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("insert then find (by id and by hand-off token) round-trips the cart; unknown ones find none", () =>
      Effect.gen(function*() {
        const carts = yield* CartStore
        const cart = newCart(T0, T0 + HOUR)
        yield* carts.insert(cart)
        expect(yield* carts.find(cart.id, T0)).toEqual(Option.some(cart))
        expect(yield* carts.findByHandoff(cart.handoffToken, T0)).toEqual(Option.some(cart))
        expect(yield* carts.find(randomId("cart_"), T0)).toEqual(Option.none())
        expect(yield* carts.findByHandoff(randomId(""), T0)).toEqual(Option.none())
        const bare = newCart(T0, T0 + HOUR, { buyer: undefined, locale: undefined })
        yield* carts.insert(bare)
        expect(yield* carts.find(bare.id, T0)).toEqual(Option.some(bare))
      }))

    it.effect("an id or a token already stored cannot be inserted again", () =>
      Effect.gen(function*() {
        const carts = yield* CartStore
        const cart = newCart(T0, T0 + HOUR)
        yield* carts.insert(cart)
        expect((yield* Effect.flip(carts.insert({ ...cart, handoffToken: randomId("") })))._tag).toBe("StorageError")
        expect((yield* Effect.flip(carts.insert({ ...cart, id: randomId("cart_") })))._tag).toBe("StorageError")
      }))

    it.effect("a cart is absent from its expiresAt on, to every operation", () =>
      Effect.gen(function*() {
        const carts = yield* CartStore
        const cart = newCart(T0, T0 + HOUR)
        yield* carts.insert(cart)
        const at = cart.expiresAt
        expect(Option.isSome(yield* carts.find(cart.id, at - 1))).toBe(true)
        expect(yield* carts.find(cart.id, at)).toEqual(Option.none())
        expect(yield* carts.findByHandoff(cart.handoffToken, at)).toEqual(Option.none())
        const replacement = { items: [], buyer: undefined, updatedAt: at, expiresAt: at + HOUR }
        expect(yield* carts.replace(cart.id, replacement, at)).toEqual(Option.none())
        expect(yield* carts.countCheckout(cart.id, at)).toBe(false)
        expect(yield* carts.remove(cart.id, at)).toEqual(Option.none())
        expect(Option.isSome(yield* carts.find(cart.id, at - 1))).toBe(true)
      }))

    it.effect("replace sets items, buyer and times, keeps the rest; the last replacement wins", () =>
      Effect.gen(function*() {
        const carts = yield* CartStore
        const cart = newCart(T0, T0 + HOUR)
        yield* carts.insert(cart)
        const first = {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          buyer: undefined,
          updatedAt: T0 + 1,
          expiresAt: T0 + 2 * HOUR
        }
        const replaced = Option.getOrThrow(yield* carts.replace(cart.id, first, T0 + 1))
        expect(replaced).toEqual({ ...cart, ...first })
        const second = {
          items: [{ id: "hoodie-zip", quantity: 3 }],
          buyer: { email: "b@example.com" },
          updatedAt: T0 + 2,
          expiresAt: T0 + 3 * HOUR
        }
        yield* carts.replace(cart.id, second, T0 + 2)
        expect(yield* carts.find(cart.id, T0 + 2)).toEqual(Option.some({ ...cart, ...second }))
      }))

    it.effect("remove answers the cart as it was and deletes it; countCheckout counts on a live cart", () =>
      Effect.gen(function*() {
        const carts = yield* CartStore
        const cart = newCart(T0, T0 + HOUR)
        yield* carts.insert(cart)
        expect(yield* carts.countCheckout(cart.id, T0)).toBe(true)
        expect(yield* carts.countCheckout(cart.id, T0)).toBe(true)
        expect(yield* carts.remove(cart.id, T0)).toEqual(Option.some({ ...cart, checkouts: 2 }))
        expect(yield* carts.find(cart.id, T0)).toEqual(Option.none())
        expect(yield* carts.remove(cart.id, T0)).toEqual(Option.none())
        expect(yield* carts.countCheckout(cart.id, T0)).toBe(false)
      }))

    it.effect("list, counts and removeExpired see only what is live (or expired) at now", () =>
      Effect.gen(function*() {
        const carts = yield* CartStore
        // Far in the past: every other case's cart is live then, so counts are taken relative to that.
        const past = Date.parse("2001-01-01T00:00:00.000Z")
        const now = past + 10 * HOUR
        const expired = newCart(past, now)
        const older = newCart(past, now + 1, { checkouts: 1 })
        const newer = newCart(past + 1, now + 2)
        const before = yield* carts.counts(now)
        for (const cart of [expired, older, newer]) yield* carts.insert(cart)
        const after = yield* carts.counts(now)
        expect(after.carts - before.carts).toBe(2)
        expect(after.withCheckout - before.withCheckout).toBe(1)
        const listed = (yield* carts.list(now, 500)).map((cart) => cart.id)
        expect(listed).not.toContain(expired.id)
        expect(listed.indexOf(newer.id)).toBeLessThan(listed.indexOf(older.id))
        expect(yield* carts.removeExpired(now, 500)).toBe(1)
        expect(yield* carts.removeExpired(now, 500)).toBe(0)
        expect(yield* carts.find(expired.id, past)).toEqual(Option.none())
        expect(Option.isSome(yield* carts.find(older.id, now))).toBe(true)
      }))
  })
