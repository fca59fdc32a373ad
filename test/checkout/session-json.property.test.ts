/**
 * The stored JSON of a session (`sessionJson`) is its wire form's text (`checkoutSessionJson`,
 * which the answers share) with the internal fields spliced in: for any session it is the same
 * JSON value as the session serialized whole, and the wire text is the wire form's; complete's
 * answer (`checkoutSessionWithOrderJson`) is that text with the order added.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc } from "effect"
import {
  checkoutSessionJson,
  checkoutSessionWithOrderJson,
  Session,
  sessionJson,
  toCheckoutSession,
  toCheckoutSessionWithOrder
} from "../../src/checkout/session/session.ts"
import { OrderSummary } from "../../src/orders/model/order.ts"

const sessions = Arbitrary.make(Session)
const orders = Arbitrary.make(OrderSummary)

describe("a session's stored JSON", () => {
  it("is the session serialized whole, and its wire text the wire form's", () => {
    fc.assert(
      fc.property(sessions, (session) => {
        expect(JSON.parse(sessionJson(session))).toEqual(JSON.parse(JSON.stringify(session)))
        expect(JSON.parse(checkoutSessionJson(session))).toEqual(JSON.parse(JSON.stringify(toCheckoutSession(session))))
      }),
      { numRuns: 200 }
    )
  })

  it("with an order added, is the completed session's wire form", () => {
    fc.assert(
      fc.property(sessions, orders, (session, order) => {
        const completed = { ...session, order }
        expect(JSON.parse(checkoutSessionWithOrderJson(completed, order))).toEqual(
          JSON.parse(JSON.stringify(toCheckoutSessionWithOrder(completed)))
        )
      }),
      { numRuns: 200 }
    )
  })

  it("is rendered once per session value: the wire text is the same string for the store and the answer", () => {
    const session = fc.sample(sessions, { numRuns: 1, seed: 7 })[0]!
    expect(checkoutSessionJson(session)).toBe(checkoutSessionJson(session))
    expect(sessionJson(session).startsWith(checkoutSessionJson(session).slice(0, -1))).toBe(true)
  })
})
