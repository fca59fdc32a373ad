/**
 * A client of the Cart API (ACP 2026-04-17) and its bodies: our own, adapted from the official cart
 * examples (`openapi.cart.yaml`, `rfc.cart.md`) to the demo catalog: `tshirt-classic` stands for their
 * `item_123`, `mug-ceramic` for `item_456`, `hoodie-zip` for `item_789`. Every answer is checked
 * strictly against our `Cart` schema (nothing missing, nothing extra at any depth).
 */
import { expect } from "@effect/vitest"
import { Effect, Either, Schema, TestClock } from "effect"
import { CartWire } from "../../src/carts/http/cart-wire.ts"
import { idempotencyKey } from "../support/acp-fixtures.ts"
import { request, type RequestOptions, testApp, type TestAppOptions, type TestResponse } from "../support/http.ts"

export const CART_VERSION = "2026-04-17"

/** Monday 2026-04-20, noon UTC. */
export const NOW = Date.parse("2026-04-20T12:00:00.000Z")

/** The official create examples (`minimal`, `with_buyer`), on the demo catalog. */
export const minimalCreate = { line_items: [{ id: "tshirt-classic", quantity: 1 }] }
export const withBuyerCreate = {
  line_items: [{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }],
  buyer: { email: "buyer@example.com" }
}
/** The official update example (`update_quantity`). */
export const quantityUpdate = { line_items: [{ id: "tshirt-classic", quantity: 3 }, { id: "hoodie-zip", quantity: 1 }] }

export const runApp = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), testApp(options)) as Effect.Effect<A, E, never>

const strictly = Schema.decodeUnknownEither(CartWire, { onExcessProperty: "error" })

/** A 200 or 201 must be exactly a `Cart`. */
export const checked = (response: TestResponse): TestResponse => {
  if (response.status === 200 || response.status === 201) {
    const decoded = strictly(response.body)
    if (Either.isLeft(decoded)) throw new Error(`not a Cart:\n${decoded.left.message}\n${response.text}`)
  }
  return response
}

const withKey = (options: Omit<RequestOptions, "body">) => ({
  version: CART_VERSION,
  ...options,
  headers: { "idempotency-key": idempotencyKey(), ...options.headers }
})

export const createCart = (body: unknown, options: Omit<RequestOptions, "body"> = {}) =>
  Effect.map(request("POST", "/carts", { ...withKey(options), body }), checked)

export const getCart = (id: string, options: RequestOptions = {}) =>
  Effect.map(request("GET", `/carts/${id}`, { version: CART_VERSION, ...options }), checked)

export const updateCart = (id: string, body: unknown, options: Omit<RequestOptions, "body"> = {}) =>
  Effect.map(request("PUT", `/carts/${id}`, { ...withKey(options), body }), checked)

export const cancelCart = (id: string, body: unknown = {}, options: Omit<RequestOptions, "body"> = {}) =>
  Effect.map(
    request("POST", `/carts/${id}/cancel`, { ...withKey(options), ...(body === undefined ? {} : { body }) }),
    checked
  )

/** A cart made from `body`, answered 201. */
export const newCart = (body: unknown = withBuyerCreate) =>
  Effect.map(createCart(body), (response) => {
    expect(response.status).toBe(201)
    return response.body as Record<string, any>
  })

export const totalOf = (cart: Record<string, any>, type: string): number | undefined =>
  (cart.totals as ReadonlyArray<{ type: string; amount: number }>).find((t) => t.type === type)?.amount
