/**
 * The stored text of an order and of its event (`storedOrderJson`, `storedEventJson`) is made from
 * the typed value without the schema: for any order and event it is the same JSON value as the
 * schema's encoding, the event's text around the order's is the event serialized whole, and what
 * the stores write passes the structural check they read events back with.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { OrderEvent } from "../../src/orders/model/order-event.ts"
import { isStoredOrderEvent, orderJson, storedEventJson, storedOrderJson } from "../../src/orders/model/order-json.ts"
import { Order } from "../../src/orders/model/order.ts"

const orders = Arbitrary.make(Order)
const events = Arbitrary.make(OrderEvent)
const encodeEvent = Schema.encodeSync(OrderEvent)

describe("an order's stored JSON", () => {
  it("is the schema's encoding of the order", () => {
    fc.assert(
      fc.property(orders, (order) => {
        expect(JSON.parse(storedOrderJson(order))).toEqual(JSON.parse(orderJson(order)))
      }),
      { numRuns: 200 }
    )
  })

  it("of an event is the schema's encoding of the event, with or without the order's text given", () => {
    fc.assert(
      fc.property(events, (event) => {
        const encoded = JSON.parse(JSON.stringify(encodeEvent(event)))
        expect(JSON.parse(storedEventJson(event))).toEqual(encoded)
        expect(JSON.parse(storedEventJson(event, storedOrderJson(event.data)))).toEqual(encoded)
        expect(isStoredOrderEvent(JSON.parse(storedEventJson(event)))).toBe(true)
      }),
      { numRuns: 200 }
    )
  })

  it("is read back only when it is an event of a known type about an order", () => {
    const event = fc.sample(events, { numRuns: 1, seed: 3 })[0]!
    const stored = JSON.parse(storedEventJson(event))
    expect(isStoredOrderEvent(stored)).toBe(true)
    for (
      const wrong of [
        null,
        [],
        "order_create",
        { ...stored, type: "order_deleted" },
        { type: stored.type },
        { ...stored, data: null },
        { ...stored, data: { ...stored.data, type: "checkout_session" } },
        { ...stored, data: { ...stored.data, id: 7 } }
      ]
    ) {
      expect(isStoredOrderEvent(wrong)).toBe(false)
    }
  })

  it("keeps the canonical form for tags and answers: the schema's order of properties", () => {
    const order = fc.sample(orders, { numRuns: 1, seed: 11 })[0]!
    const reversed = Object.fromEntries(Object.entries(order).reverse()) as Order
    expect(orderJson(reversed)).toBe(orderJson(order))
  })
})
