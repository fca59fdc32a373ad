/**
 * The session reducer's Create: the ready session with prices, tax, options and totals, the gaps
 * of a cart not ready, tax by region and category, line ids, determinism, unknown products and
 * stock, the interventions narrowed to the agent's, and the JSON round trip of what it builds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { createHash } from "node:crypto"
import type { CatalogSnapshot } from "../../src/catalog/model/catalog.ts"
import { lineItemId } from "../../src/checkout/session/draft.ts"
import { reduce } from "../../src/checkout/session/reducer.ts"
import { Session, SessionCommand } from "../../src/checkout/session/session.ts"
import { reservationsOf } from "../../src/checkout/session/view.ts"
import { buyer, CA, context, demoCatalog, GB, JP, NY, TX } from "../support/fixtures.ts"
import { create, fail, map, ok, readySession } from "./session-reducer-fixtures.ts"

describe("Create", () => {
  it("builds a ready session with prices, tax, options and totals", () => {
    const { reservations, session } = ok(
      reduce(
        undefined,
        SessionCommand.Create({
          id: "cs_test",
          request: { items: [{ id: "tshirt-classic", quantity: 2 }], buyer, fulfillment_address: NY }
        }),
        context()
      )
    )
    expect(session.id).toBe("cs_test")
    expect(session.status).toBe("ready_for_payment")
    expect(session.currency).toBe("usd")
    expect(session.items).toEqual([{ id: "tshirt-classic", quantity: 2 }])
    expect(session.line_items).toEqual([
      {
        id: lineItemId("cs_test", "tshirt-classic", 0),
        item: { id: "tshirt-classic", quantity: 2 },
        base_amount: 5000,
        discount: 0,
        subtotal: 5000,
        tax: 444,
        total: 5444
      }
    ])
    expect(session.fulfillment_address).toEqual({ ...NY, country: "US" })
    expect(session.buyer).toEqual(buyer)
    expect(session.fulfillment_options.map((o) => [o.id, o.total])).toEqual([
      ["standard", 544],
      ["express", 1633]
    ])
    expect(session.fulfillment_option_id).toBe("standard")
    expect(session.totals).toEqual([
      { type: "items_base_amount", display_text: "Items", amount: 5000 },
      { type: "subtotal", display_text: "Subtotal", amount: 5000 },
      { type: "fulfillment", display_text: "Shipping", amount: 500 },
      { type: "tax", display_text: "Tax", amount: 488 },
      { type: "total", display_text: "Total", amount: 5988 }
    ])
    expect(session.messages).toEqual([])
    expect(session.links).toEqual(demoCatalog.links)
    expect(session.capabilities).toEqual({
      payment: { handlers: demoCatalog.paymentHandlers },
      interventions: demoCatalog.interventions,
      extensions: [expect.objectContaining({ name: "dev.proto.discount" })]
    })
    expect(session.created_at).toBe("2026-01-30T12:00:00.000Z")
    expect(session.updated_at).toBe("2026-01-30T12:00:00.000Z")
    expect(session.expires_at).toBe("2026-01-30T13:00:00.000Z")
    expect(session.order).toBeUndefined()
    expect(reservations).toEqual(map({ "tshirt-classic": 2 }))
  })

  it("reports every gap of a bare physical cart", () => {
    const session = create({ items: [{ id: "tshirt-classic", quantity: 1 }] })
    expect(session.status).toBe("not_ready_for_payment")
    expect(session.fulfillment_options).toEqual([])
    expect("fulfillment_option_id" in session).toBe(false)
    expect("buyer" in session).toBe(false)
    expect("fulfillment_address" in session).toBe(false)
    expect(session.messages).toEqual([
      {
        type: "error",
        code: "missing",
        param: "$.fulfillment_address",
        content_type: "plain",
        content: "A shipping address is required for physical items."
      },
      {
        type: "error",
        code: "missing",
        param: "$.buyer",
        content_type: "plain",
        content: "Buyer details (first name, last name and email) are required."
      }
    ])
    expect(session.totals.map((t) => [t.type, t.amount])).toEqual([
      ["items_base_amount", 2500],
      ["subtotal", 2500],
      ["tax", 0],
      ["total", 2500]
    ])
  })

  it("needs no address for a digital cart and selects the digital option", () => {
    const session = create({ items: [{ id: "ebook-field-guide", quantity: 1 }], buyer })
    expect(session.status).toBe("ready_for_payment")
    expect(session.fulfillment_options.map((o) => o.type)).toEqual(["digital"])
    expect(session.fulfillment_option_id).toBe("digital")
    expect(session.totals.map((t) => [t.type, t.display_text, t.amount])).toEqual([
      ["items_base_amount", "Items", 1999],
      ["subtotal", "Subtotal", 1999],
      ["fulfillment", "Delivery", 0],
      ["tax", "Tax", 0],
      ["total", "Total", 1999]
    ])
  })

  it("taxes by the address region and category", () => {
    const inCalifornia = create({
      items: [{ id: "ebook-field-guide", quantity: 1 }, { id: "mug-ceramic", quantity: 1 }],
      buyer,
      fulfillment_address: CA
    })
    expect(inCalifornia.line_items.map((l) => l.tax)).toEqual([0, 102]) // 1400 × 7.25 % = 101.5 → 102
    expect(inCalifornia.fulfillment_options.map((o) => o.tax)).toEqual([0, 0])
    const inTexas = create({
      items: [{ id: "ebook-field-guide", quantity: 1 }, { id: "gift-card-50", quantity: 1 }],
      buyer,
      fulfillment_address: TX
    })
    expect(inTexas.line_items.map((l) => l.tax)).toEqual([100, 0])
    const inBritain = create({
      items: [{ id: "tshirt-classic", quantity: 1 }, { id: "ebook-field-guide", quantity: 1 }],
      buyer,
      fulfillment_address: GB
    })
    expect(inBritain.line_items.map((l) => l.tax)).toEqual([500, 400])
    expect(inBritain.fulfillment_option_id).toBe("international")
    expect(inBritain.totals.map((t) => [t.type, t.amount])).toEqual([
      ["items_base_amount", 4499],
      ["subtotal", 4499],
      ["fulfillment", 2500],
      ["tax", 1400],
      ["total", 8399]
    ])
  })

  it("says so when no method ships to the address country", () => {
    const session = create({ items: [{ id: "tshirt-classic", quantity: 1 }], buyer, fulfillment_address: JP })
    expect(session.status).toBe("not_ready_for_payment")
    expect(session.messages).toEqual([
      {
        type: "error",
        code: "invalid",
        param: "$.fulfillment_address.country",
        content_type: "plain",
        content: "We do not ship to JP."
      }
    ])
  })

  it("keeps duplicate items as separate lines with distinct deterministic ids", () => {
    const session = create({
      items: [{ id: "mug-ceramic", quantity: 1 }, { id: "tshirt-classic", quantity: 1 }, {
        id: "mug-ceramic",
        quantity: 2
      }]
    })
    const expectedId = (p: string, n: number) =>
      "li_" + createHash("sha256").update(`cs_test\0${p}\0${n}`).digest("hex").slice(0, 24)
    expect(session.line_items.map((l) => l.id)).toEqual([
      expectedId("mug-ceramic", 0),
      expectedId("tshirt-classic", 0),
      expectedId("mug-ceramic", 1)
    ])
    expect(session.line_items[0]!.id).toMatch(/^li_[0-9a-f]{24}$/)
    expect(reservationsOf(session)).toEqual(map({ "mug-ceramic": 3, "tshirt-classic": 1 }))
  })

  it("is deterministic", () => {
    const request = { items: [{ id: "hoodie-zip", quantity: 1 }], buyer, fulfillment_address: NY }
    expect(create(request)).toStrictEqual(create(request))
    expect(create(request, context(), "cs_other").line_items[0]!.id).not.toBe(create(request).line_items[0]!.id)
  })

  it("fails on an unknown product, before checking stock", () => {
    const error = fail(
      reduce(
        undefined,
        SessionCommand.Create({
          id: "cs",
          request: { items: [{ id: "print-limited", quantity: 9 }, { id: "nope", quantity: 1 }] }
        }),
        context()
      )
    )
    expect(error._tag).toBe("UnknownProduct")
    expect(error).toMatchObject({ index: 1, productId: "nope" })
  })

  it("fails out of stock at the item where the running total exceeds", () => {
    const error = fail(
      reduce(
        undefined,
        SessionCommand.Create({
          id: "cs",
          request: {
            items: [{ id: "print-limited", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }, {
              id: "print-limited",
              quantity: 2
            }]
          }
        }),
        context()
      )
    )
    expect(error._tag).toBe("OutOfStock")
    expect(error).toMatchObject({ index: 2, productId: "print-limited", requested: 4, available: 3 })
    // exactly the stock is fine
    expect(create({ items: [{ id: "print-limited", quantity: 3 }] }).items).toEqual([{
      id: "print-limited",
      quantity: 3
    }])
  })

  it("treats a product missing from the availability map as unavailable", () => {
    const error = fail(
      reduce(
        undefined,
        SessionCommand.Create({ id: "cs", request: { items: [{ id: "mug-ceramic", quantity: 1 }] } }),
        context({ available: new Map() })
      )
    )
    expect(error).toMatchObject({ _tag: "OutOfStock", index: 0, requested: 1, available: 0 })
  })

  it("narrows interventions to what the agent declares", () => {
    const catalog: CatalogSnapshot = {
      ...demoCatalog,
      interventions: { supported: ["3ds", "address_verification"], enforcement: "conditional" },
      extensions: [{ name: "discount", extends: ["$.discounts"] }],
      coupons: []
    }
    const ctx = context({ catalog })
    const items = [{ id: "mug-ceramic", quantity: 1 }]
    const declared = create({ items, capabilities: { interventions: { supported: ["3ds", "biometrics"] } } }, ctx)
    expect(declared.capabilities).toEqual({
      payment: { handlers: demoCatalog.paymentHandlers },
      interventions: { supported: ["3ds"], enforcement: "conditional" },
      extensions: [{ name: "discount", extends: ["$.discounts"] }]
    })
    expect(create({ items, capabilities: { interventions: { supported: [] } } }, ctx).capabilities.interventions)
      .toEqual({
        supported: [],
        enforcement: "conditional"
      })
    expect(create({ items }, ctx).capabilities.interventions).toEqual(catalog.interventions)
    expect(create({ items, capabilities: {} }, ctx).capabilities.interventions).toEqual(catalog.interventions)
    // catalog without interventions: none, whatever the agent says
    const plain = context({ catalog: { ...demoCatalog, interventions: undefined, coupons: [] } })
    expect(create({ items, capabilities: { interventions: { supported: ["3ds"] } } }, plain).capabilities).toEqual({
      payment: { handlers: demoCatalog.paymentHandlers }
    })
  })

  it("produces sessions that survive a JSON round trip through the Session schema", () => {
    for (
      const session of [
        readySession(),
        create({ items: [{ id: "tshirt-classic", quantity: 1 }] }),
        create({ items: [{ id: "gift-card-50", quantity: 1 }], buyer })
      ]
    ) {
      const decoded = Schema.decodeUnknownSync(Session)(JSON.parse(JSON.stringify(Schema.encodeSync(Session)(session))))
      expect(decoded).toEqual(session)
    }
  })

  it("throws when the session already exists", () => {
    expect(() => reduce(readySession(), SessionCommand.Create({ id: "cs_test", request: { items: [] } }), context()))
      .toThrow()
  })
})
