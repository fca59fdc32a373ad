/**
 * The session reducer's invariants on random carts, addresses and buyers (fast-check): after a
 * Create and an Update, totals add up, readiness matches the messages, an offered option is
 * selected, and the reservations are the items' quantities.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { reduce } from "../../src/checkout/session/reducer.ts"
import { SessionCommand } from "../../src/checkout/session/session.ts"
import { buyer, CA, context, demoCatalog, GB, JP, NY, TX } from "../support/fixtures.ts"
import { ok } from "./session-reducer-fixtures.ts"

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
