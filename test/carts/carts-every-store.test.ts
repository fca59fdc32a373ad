/**
 * The Cart API on every store (memory, embedded PGlite, PostgreSQL when `TEST_DATABASE_URL` is set):
 * idempotent POSTs and PUTs by 2026-04-17's rules, concurrent replacements of one cart (the last write
 * wins), expiry on the test clock (absent from `expires_at` on, refreshed by an update, swept).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { CartService } from "../../src/carts/cart-service.ts"
import { CartStore } from "../../src/carts/cart-store.ts"
import { request, testApp } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"
import {
  cancelCart,
  createCart,
  getCart,
  minimalCreate,
  newCart,
  NOW,
  quantityUpdate,
  updateCart,
  withBuyerCreate
} from "./cart-fixtures.ts"

const TTL_MILLIS = 604800_000

const requestWithoutKey = (method: string, path: string, body: unknown) =>
  request(method, path, { version: "2026-04-17", body })

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`carts: ${store.name}`, () => {
    store.register()
    const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(store.freshStores, (stores) =>
        Effect.provide(
          Effect.zipRight(TestClock.setTime(NOW), effect),
          testApp(stores) as Layer.Layer<any>
        )) as Effect.Effect<A, E, never>

    it.effect("a create retried with its key is replayed (one cart); another body with that key is 422", () =>
      run(Effect.gen(function*() {
        const headers = { "idempotency-key": "cart-create-1" }
        const first = yield* createCart(withBuyerCreate, { headers })
        const again = yield* createCart(withBuyerCreate, { headers })
        expect(again.status).toBe(201)
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect(again.body).toEqual(first.body)
        expect((yield* (yield* CartStore).counts(NOW)).carts).toBe(1)
        const other = yield* createCart(minimalCreate, { headers })
        expect(other.status).toBe(422)
        expect(other.body.code).toBe("idempotency_conflict")
        const missing = yield* createCart(minimalCreate, { headers: { "idempotency-key": "" } })
        expect(missing.status).toBe(400)
      })))

    it.effect("every POST and PUT needs an Idempotency-Key (400); a PUT replay answers the stored cart", () =>
      run(Effect.gen(function*() {
        const cart = yield* newCart()
        for (
          const response of [
            yield* requestWithoutKey("POST", "/carts", minimalCreate),
            yield* requestWithoutKey("PUT", `/carts/${cart.id}`, quantityUpdate),
            yield* requestWithoutKey("POST", `/carts/${cart.id}/cancel`, {})
          ]
        ) {
          expect(response.status).toBe(400)
          expect(response.body.type).toBe("invalid_request")
        }
        const headers = { "idempotency-key": "cart-put-1" }
        const updated = yield* updateCart(cart.id, quantityUpdate, { headers })
        yield* updateCart(cart.id, withBuyerCreate)
        // The replay answers what the keyed request was answered, not the cart as it is now.
        const replay = yield* updateCart(cart.id, quantityUpdate, { headers })
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.body).toEqual(updated.body)
        expect((yield* updateCart(cart.id, minimalCreate, { headers })).status).toBe(422)
        // A cancel retried after it deleted the cart answers its 200 again, not 404.
        const cancelKey = { "idempotency-key": "cart-cancel-1" }
        const canceled = yield* cancelCart(cart.id, {}, { headers: cancelKey })
        const canceledAgain = yield* cancelCart(cart.id, {}, { headers: cancelKey })
        expect([canceled.status, canceledAgain.status]).toEqual([200, 200])
        expect(canceledAgain.body).toEqual(canceled.body)
      })))

    it.effect("concurrent replacements of one cart: each answered 200, the cart is one of them whole", () =>
      run(Effect.gen(function*() {
        const cart = yield* newCart()
        const bodies = [1, 2, 3, 4, 5, 6].map((quantity) => ({
          line_items: [{ id: "tshirt-classic", quantity }, { id: "mug-ceramic", quantity }]
        }))
        const answers = yield* Effect.all(bodies.map((body) => updateCart(cart.id, body)), { concurrency: "unbounded" })
        expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200))
        const final = (yield* getCart(cart.id)).body
        const quantities = final.line_items.map((line: any) => line.quantity)
        expect(quantities[0]).toBe(quantities[1])
        expect(answers.map((answer) => answer.body)).toContainEqual(final)
      })))

    it.effect("expiry: absent from expires_at on (404), refreshed by an update, then swept", () =>
      run(Effect.gen(function*() {
        const kept = yield* newCart()
        const idle = yield* newCart()
        yield* TestClock.adjust(TTL_MILLIS - 1000)
        const updated = (yield* updateCart(kept.id, quantityUpdate)).body
        expect(updated.expires_at).toBe(new Date(NOW + TTL_MILLIS - 1000 + TTL_MILLIS).toISOString())
        expect((yield* getCart(idle.id)).status).toBe(200)
        yield* TestClock.adjust(1000)
        for (
          const response of [
            yield* getCart(idle.id),
            yield* updateCart(idle.id, quantityUpdate),
            yield* cancelCart(idle.id)
          ]
        ) {
          expect(response.status).toBe(404)
          expect(response.body.code).toBe("not_found")
        }
        expect((yield* getCart(kept.id)).status).toBe(200)
        const carts = yield* CartService
        expect(yield* carts.expireDue(100)).toBe(1)
        expect(yield* carts.expireDue(100)).toBe(0)
        yield* TestClock.adjust(TTL_MILLIS)
        expect(yield* carts.expireDue(100)).toBe(1)
        expect((yield* (yield* CartStore).counts(NOW + 3 * TTL_MILLIS)).carts).toBe(0)
      })))
  })
}
