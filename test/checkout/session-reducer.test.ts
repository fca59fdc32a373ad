import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { createHash } from "node:crypto"
import type { CatalogSnapshot } from "../../src/catalog/catalog.ts"
import type { CheckoutSessionCreateRequest, MessageError } from "../../src/checkout/checkout-schemas.ts"
import { lineItemId } from "../../src/checkout/session-draft.ts"
import {
  type ReducerContext,
  type ReducerError,
  Session,
  SessionCommand,
  type Transition
} from "../../src/checkout/session-model.ts"
import { reduce } from "../../src/checkout/session-reducer.ts"
import { isExpiredAt, reservationsOf, view } from "../../src/checkout/session-view.ts"
import { buyer, CA, context, demoCatalog, GB, JP, NOW, NY, TTL_SECONDS, TX } from "../support/fixtures.ts"

const ok = (result: Either.Either<Transition, ReducerError>): Transition =>
  Either.getOrThrowWith(result, (error) => new Error(`expected success, got ${error._tag}`))

const fail = (result: Either.Either<Transition, ReducerError>): ReducerError =>
  Either.getOrThrowWith(Either.flip(result), () => new Error("expected a failure"))

const create = (request: CheckoutSessionCreateRequest, ctx: ReducerContext = context(), id = "cs_test") =>
  ok(reduce(undefined, SessionCommand.Create({ id, request }), ctx)).session

/** A ready NY session: 2 t-shirts, standard shipping selected. */
const readySession = (ctx: ReducerContext = context()) =>
  create({ items: [{ id: "tshirt-classic", quantity: 2 }], buyer, fulfillment_address: NY }, ctx)

const at = (ms: number, overrides: Partial<ReducerContext> = {}) => context({ now: ms, ...overrides })
const EXPIRES = NOW + TTL_SECONDS * 1000
const LATER = NOW + 60_000
const iso = (ms: number) => new Date(ms).toISOString()
const map = (entries: Record<string, number>) => new Map(Object.entries(entries))
const declined: MessageError = {
  type: "error",
  code: "payment_declined",
  param: "$.payment_data",
  content_type: "plain",
  content: "The card was declined."
}
const order = { id: "ord_1", checkout_session_id: "cs_test", permalink_url: "https://merchant.example/orders/ord_1" }

const withStatus = (session: Session, status: Session["status"]): Session => ({ ...session, status })

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

describe("PrepareCompletion", () => {
  const prepare = (session: Session, b: typeof buyer | undefined, ctx = at(LATER)) =>
    reduce(session, SessionCommand.PrepareCompletion({ buyer: b }), ctx)

  it("returns the ready session, keeping the deadline and the reservations", () => {
    const { reservations, session } = ok(prepare(readySession(), undefined))
    expect(session.status).toBe("ready_for_payment")
    expect(session.expires_at).toBe(iso(EXPIRES))
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.totals.find((t) => t.type === "total")?.amount).toBe(5988)
    expect(reservations).toEqual(map({ "tshirt-classic": 2 }))
  })

  it("applies the buyer first", () => {
    const noBuyer = create({ items: [{ id: "tshirt-classic", quantity: 1 }], fulfillment_address: NY })
    expect(noBuyer.status).toBe("not_ready_for_payment")
    const { session } = ok(prepare(noBuyer, buyer))
    expect(session.status).toBe("ready_for_payment")
    expect(session.buyer).toEqual(buyer)
    expect(session.messages).toEqual([])
  })

  it("fails with the gaps when not ready", () => {
    const bare = create({ items: [{ id: "tshirt-classic", quantity: 1 }] })
    const error = fail(prepare(bare, undefined))
    expect(error._tag).toBe("SessionNotReady")
    if (error._tag === "SessionNotReady") {
      expect(error.messages.map((m) => [m.code, m.param])).toEqual([
        ["missing", "$.fulfillment_address"],
        ["missing", "$.buyer"]
      ])
    }
    const empty = ok(reduce(readySession(), SessionCommand.Update({ request: { items: [] } }), context())).session
    expect(fail(prepare(empty, buyer))).toMatchObject({
      _tag: "SessionNotReady",
      messages: [{ code: "missing", param: "$.items" }]
    })
  })

  it("refuses final sessions with their status (409 on complete)", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(prepare(withStatus(readySession(), status), buyer))).toMatchObject({
        _tag: "SessionFinal",
        status,
        command: "complete"
      })
    }
    expect(fail(prepare(readySession(), buyer, at(EXPIRES)))).toMatchObject({
      _tag: "SessionFinal",
      status: "expired",
      command: "complete"
    })
    expect(ok(prepare(readySession(), buyer, at(EXPIRES - 1))).session.status).toBe("ready_for_payment")
  })
})

describe("MarkCompleted", () => {
  it("completes with the order, drops the decline message and releases reservations", () => {
    const failed =
      ok(reduce(readySession(), SessionCommand.RecordPaymentFailure({ message: declined }), context())).session
    const { reservations, session } = ok(reduce(failed, SessionCommand.MarkCompleted({ order }), at(LATER)))
    expect(session.status).toBe("completed")
    expect(session.order).toEqual(order)
    expect(session.messages).toEqual([])
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.line_items).toEqual(failed.line_items)
    expect(reservations).toEqual(new Map())
    expect(reservationsOf(session)).toEqual(new Map())
  })

  it("records the order even if the deadline passed since the payment was prepared", () => {
    expect(ok(reduce(readySession(), SessionCommand.MarkCompleted({ order }), at(EXPIRES + 5))).session.status).toBe(
      "completed"
    )
  })

  it("refuses sessions already final", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(reduce(withStatus(readySession(), status), SessionCommand.MarkCompleted({ order }), context())))
        .toMatchObject({
          _tag: "SessionFinal",
          status,
          command: "complete"
        })
    }
  })
})

describe("RecordPaymentFailure", () => {
  it("adds the decline after the readiness messages, replacing an earlier decline", () => {
    const first = ok(reduce(readySession(), SessionCommand.RecordPaymentFailure({ message: declined }), at(LATER)))
    expect(first.session.status).toBe("ready_for_payment")
    expect(first.session.messages).toEqual([declined])
    expect(first.session.updated_at).toBe(iso(LATER))
    expect(first.session.expires_at).toBe(iso(EXPIRES))
    expect(first.reservations).toEqual(map({ "tshirt-classic": 2 }))
    const again = { ...declined, content: "Insufficient funds." }
    const second = ok(reduce(first.session, SessionCommand.RecordPaymentFailure({ message: again }), at(LATER)))
    expect(second.session.messages).toEqual([again])
  })

  it("keeps the status and the readiness gaps of a session that is not ready", () => {
    const bare = create({ items: [{ id: "tshirt-classic", quantity: 1 }] })
    const { session } = ok(reduce(bare, SessionCommand.RecordPaymentFailure({ message: declined }), context()))
    expect(session.status).toBe("not_ready_for_payment")
    expect(session.messages.map((m) => m.param)).toEqual(["$.fulfillment_address", "$.buyer", "$.payment_data"])
  })

  it("refuses final sessions", () => {
    expect(
      fail(
        reduce(
          withStatus(readySession(), "canceled"),
          SessionCommand.RecordPaymentFailure({ message: declined }),
          context()
        )
      )
    ).toMatchObject({
      _tag: "SessionFinal",
      status: "canceled"
    })
    expect(fail(reduce(readySession(), SessionCommand.RecordPaymentFailure({ message: declined }), at(EXPIRES))))
      .toMatchObject({
        _tag: "SessionFinal",
        status: "expired"
      })
  })
})

describe("Cancel", () => {
  it("cancels an active session and releases its reservations", () => {
    const { reservations, session } = ok(reduce(readySession(), SessionCommand.Cancel({}), at(LATER)))
    expect(session.status).toBe("canceled")
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.line_items).toHaveLength(1)
    expect(reservations).toEqual(new Map())
  })

  it("refuses final sessions with their status (405 on cancel)", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(reduce(withStatus(readySession(), status), SessionCommand.Cancel({}), context()))).toMatchObject({
        _tag: "SessionFinal",
        status,
        command: "cancel"
      })
    }
    expect(fail(reduce(readySession(), SessionCommand.Cancel({}), at(EXPIRES)))).toMatchObject({
      _tag: "SessionFinal",
      status: "expired"
    })
    expect(ok(reduce(readySession(), SessionCommand.Cancel({}), at(EXPIRES - 1))).session.status).toBe("canceled")
  })
})

describe("Expire and lazy expiry", () => {
  it("expires exactly at expires_at, not a millisecond before", () => {
    const session = readySession()
    expect(isExpiredAt(session, EXPIRES)).toBe(true)
    expect(isExpiredAt(session, EXPIRES - 1)).toBe(false)
    expect(view(session, EXPIRES).status).toBe("expired")
    expect(view(session, EXPIRES - 1)).toBe(session)

    const expired = ok(reduce(session, SessionCommand.Expire(), at(EXPIRES)))
    expect(expired.session).toEqual({ ...session, status: "expired" })
    expect(expired.reservations).toEqual(new Map())

    const live = ok(reduce(session, SessionCommand.Expire(), at(EXPIRES - 1)))
    expect(live.session).toBe(session)
    expect(live.reservations).toEqual(map({ "tshirt-classic": 2 }))
  })

  it("leaves final sessions alone", () => {
    const canceled = withStatus(readySession(), "canceled")
    const result = ok(reduce(canceled, SessionCommand.Expire(), at(EXPIRES + 1)))
    expect(result.session).toBe(canceled)
    expect(result.reservations).toEqual(new Map())
    expect(view(canceled, EXPIRES + 1).status).toBe("canceled")
  })
})

describe("state table of the interface document", () => {
  const completed = ok(reduce(readySession(), SessionCommand.MarkCompleted({ order }), context())).session
  const canceled = ok(reduce(readySession(), SessionCommand.Cancel({}), context())).session

  it("complete on completed or canceled → SessionFinal(complete), unchanged", () => {
    expect(fail(reduce(completed, SessionCommand.PrepareCompletion({ buyer: undefined }), context()))).toMatchObject({
      _tag: "SessionFinal",
      status: "completed",
      command: "complete"
    })
    expect(fail(reduce(canceled, SessionCommand.PrepareCompletion({ buyer }), context()))).toMatchObject({
      _tag: "SessionFinal",
      status: "canceled",
      command: "complete"
    })
  })

  it("cancel on completed or canceled → SessionFinal(cancel)", () => {
    expect(fail(reduce(completed, SessionCommand.Cancel({}), context()))).toMatchObject({
      status: "completed",
      command: "cancel"
    })
    expect(fail(reduce(canceled, SessionCommand.Cancel({}), context()))).toMatchObject({
      status: "canceled",
      command: "cancel"
    })
  })

  it("completed and canceled sessions hold no reservations and never expire", () => {
    expect(reservationsOf(completed)).toEqual(new Map())
    expect(reservationsOf(canceled)).toEqual(new Map())
    expect(view(completed, EXPIRES * 2).status).toBe("completed")
  })
})

describe("reducer invariants (property)", () => {
  const productIds = [...demoCatalog.products.keys()]
  const arbItems = fc.array(
    fc.record({ id: fc.constantFrom(...productIds), quantity: fc.integer({ min: 1, max: 3 }) }),
    { minLength: 1, maxLength: 8 }
  )
  const arbAddress = fc.option(fc.constantFrom(NY, CA, TX, GB, JP), { nil: undefined })

  it("every created or updated session has consistent totals and readiness", () => {
    fc.assert(
      fc.property(arbItems, arbAddress, fc.boolean(), arbItems, arbAddress, (items, addr, withBuyer, items2, addr2) => {
        const ctx = context({ available: new Map(productIds.map((id) => [id, 1_000])) })
        const first = ok(
          reduce(
            undefined,
            SessionCommand.Create({
              id: "cs_p",
              request: { items, ...(addr ? { fulfillment_address: addr } : {}), ...(withBuyer ? { buyer } : {}) }
            }),
            ctx
          )
        )
        const second = ok(
          reduce(
            first.session,
            SessionCommand.Update({ request: { items: items2, ...(addr2 ? { fulfillment_address: addr2 } : {}) } }),
            ctx
          )
        )
        for (const { reservations, session } of [first, second]) {
          const amount = (type: string) => session.totals.find((t) => t.type === type)?.amount ?? 0
          const selected = session.fulfillment_options.find((o) => o.id === session.fulfillment_option_id)
          expect(amount("subtotal")).toBe(session.line_items.reduce((a, l) => a + l.subtotal, 0))
          expect(amount("tax")).toBe(session.line_items.reduce((a, l) => a + l.tax, 0) + (selected?.tax ?? 0))
          expect(amount("total")).toBe(amount("subtotal") + amount("fulfillment") + amount("tax"))
          expect(session.status === "ready_for_payment").toBe(session.messages.length === 0)
          if (session.fulfillment_options.length > 0) expect(selected).toBeDefined()
          expect(session.line_items.map((l) => l.item)).toEqual(session.items)
          const held = new Map<string, number>()
          for (const item of session.items) held.set(item.id, (held.get(item.id) ?? 0) + item.quantity)
          expect(reservations).toEqual(held)
        }
      }),
      { numRuns: 200 }
    )
  })
})
