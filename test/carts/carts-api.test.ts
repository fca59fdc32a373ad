/**
 * The Cart API over REST, each route with the official examples' bodies (adapted to the demo catalog)
 * and strict schemas: create, read, replace, cancel; estimated totals; availability messages; errors in
 * 2026-04-17's error object; other versions refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "../support/http.ts"
import {
  cancelCart,
  CART_VERSION,
  createCart,
  getCart,
  minimalCreate,
  newCart,
  NOW,
  quantityUpdate,
  runApp,
  totalOf,
  updateCart,
  withBuyerCreate
} from "./cart-fixtures.ts"

describe("Cart API (2026-04-17)", () => {
  it.effect("create (the with_buyer example): 201, priced lines, estimated totals without tax, no stock held", () =>
    runApp(Effect.gen(function*() {
      const response = yield* createCart(withBuyerCreate)
      expect(response.status).toBe(201)
      const cart = response.body
      expect(cart.id).toMatch(/^cart_[0-9A-Za-z]{22}$/)
      expect(cart.currency).toBe("usd")
      expect(cart.buyer).toEqual({ email: "buyer@example.com" })
      expect(cart.line_items.map((line: any) => [line.item, line.quantity, line.availability_status])).toEqual([
        [{ id: "tshirt-classic", name: "Classic Cotton T-Shirt", unit_amount: 2500 }, 2, "in_stock"],
        [{ id: "mug-ceramic", name: "Ceramic Coffee Mug, 12 oz", unit_amount: 1400 }, 1, "in_stock"]
      ])
      expect(cart.line_items[0].totals).toEqual([{ type: "subtotal", display_text: "Subtotal", amount: 5000 }])
      expect(cart.totals).toEqual([
        { type: "subtotal", display_text: "Subtotal", amount: 6400 },
        { type: "total", display_text: "Estimated total", amount: 6400 }
      ])
      expect(cart.messages).toEqual([{
        type: "info",
        content_type: "plain",
        content: "Estimated total: tax and shipping are calculated at checkout."
      }])
      expect(cart.continue_url).toMatch(/^https:\/\/merchant\.test\/cart\/[0-9A-Za-z]{22}$/)
      expect(cart.continue_url).not.toContain(cart.id)
      expect(cart.expires_at).toBe(new Date(NOW + 604800_000).toISOString())
      // Nothing reserved: a checkout can still take every unit (the print has 3).
      const print = yield* createCart({ line_items: [{ id: "print-limited", quantity: 3 }] })
      expect(print.status).toBe(201)
      const checkout = yield* request("POST", "/checkout_sessions", {
        version: "2025-09-29",
        body: { items: [{ id: "print-limited", quantity: 3 }] }
      })
      expect(checkout.status).toBe(201)
    })))

  it.effect("create (the minimal example); a quantity left out is 1; the locale is accepted", () =>
    runApp(Effect.gen(function*() {
      expect((yield* createCart(minimalCreate)).body.line_items[0].quantity).toBe(1)
      const cart = (yield* createCart({ line_items: [{ id: "mug-ceramic" }], locale: "en-US" })).body
      expect(cart.line_items[0].quantity).toBe(1)
      expect(totalOf(cart, "total")).toBe(1400)
    })))

  it.effect("get answers the cart as created; an unknown id is 404 not_found", () =>
    runApp(Effect.gen(function*() {
      const cart = yield* newCart()
      const read = yield* getCart(cart.id)
      expect(read.status).toBe(200)
      expect(read.body).toEqual(cart)
      const missing = yield* getCart("cart_unknown")
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({
        type: "invalid_request",
        code: "not_found",
        message: "Cart not found or has expired."
      })
    })))

  it.effect("update (the update_quantity example) replaces the items; the buyer is replaced too", () =>
    runApp(Effect.gen(function*() {
      const cart = yield* newCart()
      const updated = yield* updateCart(cart.id, quantityUpdate)
      expect(updated.status).toBe(200)
      expect(updated.body.line_items.map((line: any) => [line.item.id, line.quantity])).toEqual([
        ["tshirt-classic", 3],
        ["hoodie-zip", 1]
      ])
      expect(updated.body.buyer).toBeUndefined()
      expect(totalOf(updated.body, "subtotal")).toBe(3 * 2500 + 5900)
      expect(updated.body.continue_url).toBe(cart.continue_url)
      expect((yield* getCart(cart.id)).body).toEqual(updated.body)
      const missing = yield* updateCart("cart_unknown", quantityUpdate)
      expect(missing.status).toBe(404)
    })))

  it.effect("cancel answers the cart's last state, then it is gone (404 to every route)", () =>
    runApp(Effect.gen(function*() {
      const cart = yield* newCart()
      const canceled = yield* cancelCart(cart.id)
      expect(canceled.status).toBe(200)
      expect(canceled.body).toEqual(cart)
      expect((yield* getCart(cart.id)).status).toBe(404)
      expect((yield* updateCart(cart.id, quantityUpdate)).status).toBe(404)
      expect((yield* cancelCart(cart.id)).status).toBe(404)
      // No body at all is as good as {}.
      const other = yield* newCart()
      expect((yield* cancelCart(other.id, undefined)).status).toBe(200)
      const third = yield* newCart()
      expect((yield* cancelCart(third.id, [])).status).toBe(400)
    })))

  it.effect("an unknown item and one asked beyond its stock stay in the cart, each with a message", () =>
    runApp(Effect.gen(function*() {
      const cart = (yield* createCart({
        line_items: [
          { id: "tshirt-classic", quantity: 1 },
          { id: "no-such-item", quantity: 1 },
          { id: "print-limited", quantity: 2 },
          { id: "print-limited", quantity: 2 }
        ]
      })).body
      expect(cart.line_items.map((line: any) => line.availability_status)).toEqual([
        "in_stock",
        undefined,
        "out_of_stock",
        "out_of_stock"
      ])
      expect(cart.line_items[1]).toEqual({
        id: cart.line_items[1].id,
        item: { id: "no-such-item" },
        quantity: 1,
        totals: []
      })
      expect(cart.messages.filter((m: any) => m.type === "error")).toEqual([
        {
          type: "error",
          code: "not_found",
          param: "$.line_items[1]",
          content_type: "plain",
          content: "no-such-item is not sold by this merchant."
        },
        {
          type: "error",
          code: "out_of_stock",
          param: "$.line_items[2]",
          content_type: "plain",
          content: "Only 3 of Limited Edition Art Print (signed) are available."
        },
        {
          type: "error",
          code: "out_of_stock",
          param: "$.line_items[3]",
          content_type: "plain",
          content: "Only 3 of Limited Edition Art Print (signed) are available."
        }
      ])
      // Still priced: the estimate shows what the cart would cost.
      expect(totalOf(cart, "subtotal")).toBe(2500 + 4 * 12000)
    })))

  it.effect("an archived product's variant in a cart: out of stock, no longer sold; the others priced", () =>
    runApp(Effect.gen(function*() {
      const archived = yield* request("DELETE", "/products/mug-ceramic")
      expect(archived.status, archived.text).toBe(200)
      const cart = (yield* createCart({
        line_items: [{ id: "tshirt-classic", quantity: 1 }, { id: "mug-ceramic", quantity: 1 }]
      })).body
      expect(cart.line_items.map((line: any) => line.availability_status)).toEqual(["in_stock", "out_of_stock"])
      expect(cart.messages.filter((m: any) => m.type === "error")).toEqual([{
        type: "error",
        code: "out_of_stock",
        param: "$.line_items[1]",
        content_type: "plain",
        content: "Ceramic Coffee Mug, 12 oz is no longer sold."
      }])
    })))

  it.effect("when no item is available: 422 out_of_stock, and an update leaves the cart as it was", () =>
    runApp(Effect.gen(function*() {
      const refused = yield* createCart({ line_items: [{ id: "no-such-item", quantity: 1 }] })
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({
        type: "invalid_request",
        code: "out_of_stock",
        message: "None of the requested items is available.",
        param: "$.line_items"
      })
      const cart = yield* newCart()
      const update = yield* updateCart(cart.id, { line_items: [{ id: "print-limited", quantity: 4 }] })
      expect(update.status).toBe(422)
      expect((yield* getCart(cart.id)).body).toEqual(cart)
    })))

  it.effect("bodies are strict: a field 2026-04-17 does not define, no line_items, an empty list, a bad buyer", () =>
    runApp(Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ ...minimalCreate, currency: "usd" }, "$.currency"],
        [{}, "$.line_items"],
        [{ line_items: [] }, "$.line_items"],
        [{ line_items: [{ id: "tshirt-classic", quantity: 0 }] }, "$.line_items[0].quantity"],
        [{ line_items: [{ id: "tshirt-classic", color: "blue" }] }, "$.line_items[0].color"],
        [{ ...minimalCreate, buyer: { first_name: "Ada" } }, "$.buyer.email"]
      ]
      for (const [body, param] of cases) {
        const response = yield* createCart(body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.body.type).toBe("invalid_request")
        expect(response.body.param, JSON.stringify(body)).toBe(param)
      }
      const cart = yield* newCart()
      const update = yield* updateCart(cart.id, { ...quantityUpdate, locale: "en-US" })
      expect(update.status).toBe(400)
      expect(update.body.param).toBe("$.locale")
    })))

  it.effect("other versions: 400 unsupported_api_version saying carts begin in 2026-04-17", () =>
    runApp(Effect.gen(function*() {
      for (const version of ["2025-09-29", "2026-01-30"]) {
        const response = yield* createCart(minimalCreate, { version })
        expect(response.status).toBe(400)
        expect(response.body).toEqual({
          type: "invalid_request",
          code: "unsupported_api_version",
          message: `The Cart API begins with API-Version ${CART_VERSION}; API-Version ${version} has no carts.`,
          param: "$.headers['API-Version']",
          supported_versions: [CART_VERSION]
        })
        expect((yield* getCart("cart_x", { version })).status).toBe(400)
      }
    })))

  it.effect("a merchant key is 403 forbidden, no key 401", () =>
    runApp(Effect.gen(function*() {
      expect((yield* createCart(minimalCreate, { auth: "mk_test_key" })).status).toBe(403)
      expect((yield* createCart(minimalCreate, { auth: false })).status).toBe(401)
    })))
})
