/**
 * The session reducer's Update: items replaced or emptied, fulfillment options selected, refused
 * or replaced when gone, stock and product ids checked, the idle deadline reset, and final
 * sessions (one expired by time included) refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { reduce } from "../../src/checkout/session/reducer.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { SessionCommand } from "../../src/checkout/session/session.ts"
import { buyer, GB, JP, NOW, NY, TTL_SECONDS } from "../support/fixtures.ts"
import { at, create, EXPIRES, fail, iso, LATER, map, ok, readySession, withStatus } from "./session-reducer-fixtures.ts"

describe("Update", () => {
  const update = (session: Session, request: Parameters<typeof SessionCommand.Update>[0]["request"], ctx = at(LATER)) =>
    reduce(session, SessionCommand.Update({ request }), ctx)

  it("replaces items, keeps the rest, resets the idle deadline", () => {
    const { reservations, session } = ok(update(readySession(), { items: [{ id: "mug-ceramic", quantity: 3 }] }))
    expect(session.items).toEqual([{ id: "mug-ceramic", quantity: 3 }])
    expect(session.line_items.map((l) => [l.item.id, l.base_amount, l.tax])).toEqual([["mug-ceramic", 4200, 373]]) // 372.75
    expect(session.buyer).toEqual(buyer)
    expect(session.fulfillment_option_id).toBe("standard")
    expect(session.status).toBe("ready_for_payment")
    expect(session.created_at).toBe(iso(NOW))
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.expires_at).toBe(iso(LATER + TTL_SECONDS * 1000))
    expect(reservations).toEqual(map({ "mug-ceramic": 3 }))
  })

  it("may empty the cart", () => {
    const { reservations, session } = ok(update(readySession(), { items: [] }))
    expect(session.status).toBe("not_ready_for_payment")
    expect(session.line_items).toEqual([])
    expect(session.fulfillment_options).toEqual([])
    expect("fulfillment_option_id" in session).toBe(false)
    expect(session.messages.map((m) => [m.type === "error" && m.code, m.param])).toEqual([["missing", "$.items"]])
    expect(session.totals.find((t) => t.type === "total")?.amount).toBe(0)
    expect(reservations).toEqual(new Map())
  })

  it("selects an offered option", () => {
    const { session } = ok(update(readySession(), { fulfillment_option_id: "express" }))
    expect(session.fulfillment_option_id).toBe("express")
    expect(session.totals.map((t) => [t.type, t.amount])).toEqual([
      ["items_base_amount", 5000],
      ["subtotal", 5000],
      ["fulfillment", 1500],
      ["tax", 577],
      ["total", 7077]
    ])
    // a later update of something else keeps the choice
    expect(ok(update(session, { buyer: { ...buyer, first_name: "Grace" } })).session.fulfillment_option_id).toBe(
      "express"
    )
  })

  it("rejects an option that is not offered", () => {
    expect(fail(update(readySession(), { fulfillment_option_id: "teleport" }))).toMatchObject({
      _tag: "UnknownFulfillmentOption",
      optionId: "teleport"
    })
    // not offered for the address given in the same request
    expect(fail(update(readySession(), { fulfillment_address: GB, fulfillment_option_id: "express" }))).toMatchObject({
      _tag: "UnknownFulfillmentOption",
      optionId: "express"
    })
    expect(
      ok(update(readySession(), { fulfillment_address: GB, fulfillment_option_id: "international" })).session
        .fulfillment_option_id
    ).toBe(
      "international"
    )
  })

  it("selects the cheapest option when the selected one is gone", () => {
    const express = ok(update(readySession(), { fulfillment_option_id: "express" })).session
    const { session } = ok(update(express, { fulfillment_address: { ...GB, country: "gb" } }))
    expect(session.fulfillment_address?.country).toBe("GB")
    expect(session.fulfillment_option_id).toBe("international")
    const nowhere = ok(update(express, { fulfillment_address: JP })).session
    expect("fulfillment_option_id" in nowhere).toBe(false)
    expect(nowhere.messages.map((m) => m.param)).toEqual(["$.fulfillment_address.country"])
    // an address appearing later gets the cheapest option
    const bare = create({ items: [{ id: "tshirt-classic", quantity: 1 }], buyer })
    expect(ok(update(bare, { fulfillment_address: NY })).session.fulfillment_option_id).toBe("standard")
    // switching to a digital cart moves to the digital option
    expect(ok(update(express, { items: [{ id: "gift-card-50", quantity: 1 }] })).session.fulfillment_option_id).toBe(
      "digital"
    )
  })

  it("checks stock and product ids of the new items, indexed in the request", () => {
    const session = readySession()
    expect(fail(update(session, { items: [{ id: "mug-ceramic", quantity: 1 }, { id: "ghost", quantity: 1 }] })))
      .toMatchObject({
        _tag: "UnknownProduct",
        index: 1,
        productId: "ghost"
      })
    const ctx = at(LATER, { available: map({ "tshirt-classic": 2, "mug-ceramic": 1 }) })
    expect(
      fail(update(session, { items: [{ id: "mug-ceramic", quantity: 1 }, { id: "tshirt-classic", quantity: 3 }] }, ctx))
    ).toMatchObject({
      _tag: "OutOfStock",
      index: 1,
      productId: "tshirt-classic",
      requested: 3,
      available: 2
    })
  })

  it("skips the stock check when items are absent", () => {
    const { reservations, session } = ok(
      update(readySession(), { buyer: { ...buyer, email: "x@y.io" } }, at(LATER, { available: new Map() }))
    )
    expect(session.buyer?.email).toBe("x@y.io")
    expect(reservations).toEqual(map({ "tshirt-classic": 2 }))
  })

  it("refuses final sessions, including one expired by time", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(update(withStatus(readySession(), status), { buyer }))).toMatchObject({
        _tag: "SessionNotModifiable",
        status
      })
    }
    expect(fail(update(readySession(), { buyer }, at(EXPIRES)))).toMatchObject({
      _tag: "SessionNotModifiable",
      status: "expired"
    })
    expect(ok(update(readySession(), { buyer }, at(EXPIRES - 1))).session.expires_at).toBe(
      iso(EXPIRES - 1 + TTL_SECONDS * 1000)
    )
  })
})
