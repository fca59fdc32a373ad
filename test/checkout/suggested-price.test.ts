/**
 * 2026-04-17 items may carry the `suggested_price` an agent saw in a product feed: the catalog's
 * price always applies, and a session whose item was suggested at another price carries an info
 * message at that line saying so, kept while the items stay and gone when they are replaced.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { clientOf, createRequest, type Json, runApp, updateRequest } from "../support/acp-fixtures.ts"

const client = clientOf("2026-04-17")

const seen = (amount: number) => ({
  amount,
  source: { feed_id: "feed_8f3K2x", channel: "shopping", updated_at: "2026-04-19T08:00:00Z" },
  observed_at: "2026-04-20T11:59:00Z"
})

const priceInfos = (session: Json) =>
  (session.messages as Array<Json>).filter((message) => message.type === "info" && /feed/.test(message.content))

describe("suggested_price (2026-04-17)", () => {
  it.effect("another price than the catalog's: an info at its line, the catalog's price charged in the totals", () =>
    runApp(Effect.gen(function*() {
      const created = yield* client.created(createRequest("2026-04-17", {
        line_items: [{ id: "mug-ceramic", quantity: 1 }, { id: "tshirt-classic", suggested_price: seen(1999) }]
      }))
      expect(priceInfos(created)).toEqual([{
        type: "info",
        param: "$.line_items[1]",
        content_type: "plain",
        content: "Classic Cotton T-Shirt costs 25.00 USD, not the 19.99 USD of feed feed_8f3K2x: this price applies."
      }])
      const shirt = created.line_items.find((line: Json) => line.item.id === "tshirt-classic")
      expect(shirt.unit_amount).toBe(2500)
      // Kept through an update that leaves the items alone.
      const updated = yield* client.update(created.id, updateRequest("2026-04-17"))
      expect(updated.status).toBe(200)
      expect(priceInfos(updated.body)).toHaveLength(1)
      expect((yield* client.get(created.id)).body.messages).toEqual(updated.body.messages)
      // New items replace what was seen for the old ones.
      const replaced = yield* client.update(created.id, { line_items: [{ id: "tshirt-classic" }] })
      expect(priceInfos(replaced.body)).toEqual([])
    })))

  it.effect("the catalog's own price: no message; 2026-01-30 has no such field (nothing said)", () =>
    runApp(Effect.gen(function*() {
      const created = yield* client.created(createRequest("2026-04-17", {
        line_items: [{ id: "tshirt-classic", suggested_price: seen(2500) }]
      }))
      expect(priceInfos(created)).toEqual([])
      const older = yield* clientOf("2026-01-30").create(createRequest("2026-01-30", {
        line_items: [{ id: "tshirt-classic", suggested_price: seen(1999) }]
      }))
      expect(older.status).toBe(201)
      expect(priceInfos(older.body)).toEqual([])
    })))

  it.effect("a malformed suggested_price is refused at its JSONPath", () =>
    runApp(Effect.gen(function*() {
      const refused = yield* client.create(createRequest("2026-04-17", {
        line_items: [{ id: "tshirt-classic", suggested_price: { amount: "19.99", source: { feed_id: "f" } } }]
      }))
      expect(refused.status).toBe(400)
      expect(refused.body.param).toMatch(/^\$\.line_items\[0\]\.suggested_price/)
    })))
})
