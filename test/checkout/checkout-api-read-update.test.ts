/**
 * The Checkout Session API's read (GET /checkout_sessions/:id) and update (POST
 * /checkout_sessions/:id) through its public surface (in-process HTTP), on every store (see
 * `./checkout-api-fixtures.ts`): items, buyer, address and fulfillment option replaced, what a
 * refused update leaves, and the 404 and 422 answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { address, buyer, createReadySession, get, post } from "../support/http.ts"
import { describeCheckoutApiOnEveryStore } from "./checkout-api-fixtures.ts"

describeCheckoutApiOnEveryStore((run) => {
  describe("GET /checkout_sessions/:id", () => {
    it.effect("returns the latest state; 404 for an unknown id", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 2 }])
        const read = yield* get(`/checkout_sessions/${created.id}`)
        expect(read.status).toBe(200)
        expect(read.body).toEqual(created)
        const missing = yield* get("/checkout_sessions/cs_doesnotexist")
        expect(missing.status).toBe(404)
        expect(missing.body).toMatchObject({ type: "invalid_request", code: "not_found" })
      })))
  })

  describe("POST /checkout_sessions/:id (update)", () => {
    it.effect("replaces items, updates buyer and address, selects an offered option", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] })
        const id = created.body.id
        const withAddress = yield* post(`/checkout_sessions/${id}`, { fulfillment_address: address, buyer })
        expect(withAddress.status).toBe(200)
        expect(withAddress.body.status).toBe("ready_for_payment")
        expect(withAddress.body.fulfillment_option_id).toBe("standard")
        const express = yield* post(`/checkout_sessions/${id}`, { fulfillment_option_id: "express" })
        expect(express.body.fulfillment_option_id).toBe("express")
        expect(express.body.totals.find((t: { type: string }) => t.type === "fulfillment").amount).toBe(1500)
        const replaced = yield* post(`/checkout_sessions/${id}`, { items: [{ id: "tshirt-classic", quantity: 3 }] })
        expect(replaced.body.line_items.map((l: { item: unknown }) => l.item)).toEqual([{
          id: "tshirt-classic",
          quantity: 3
        }])
        expect(replaced.body.fulfillment_option_id).toBe("express")
        expect(replaced.body.buyer).toEqual(buyer)
        const emptied = yield* post(`/checkout_sessions/${id}`, { items: [] })
        expect(emptied.status).toBe(200)
        expect(emptied.body.status).toBe("not_ready_for_payment")
        expect(emptied.body.messages.map((m: { param: string }) => m.param)).toContain("$.items")
      })))

    it.effect("a shipping country with no method: options vanish and a message says so", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const moved = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_address: { ...address, country: "JP" }
        })
        expect(moved.status).toBe(200)
        expect(moved.body.fulfillment_options).toEqual([])
        expect(moved.body.status).toBe("not_ready_for_payment")
        expect(moved.body.messages).toContainEqual(
          expect.objectContaining({ code: "invalid", param: "$.fulfillment_address.country" })
        )
        const gb = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_address: { ...address, country: "GB" }
        })
        expect(gb.body.fulfillment_option_id).toBe("international")
      })))

    it.effect("400 for an option that is not offered; the stored session is unchanged", () =>
      run(Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const before = yield* get(`/checkout_sessions/${created.id}`)
        const bad = yield* post(`/checkout_sessions/${created.id}`, {
          fulfillment_option_id: "teleport",
          buyer: { ...buyer, first_name: "Changed" }
        })
        expect(bad.status).toBe(400)
        expect(bad.body).toMatchObject({ code: "invalid", param: "$.fulfillment_option_id" })
        const invalidItems = yield* post(`/checkout_sessions/${created.id}`, {
          items: [{ id: "mug-ceramic", quantity: -1 }]
        })
        expect(invalidItems.status).toBe(400)
        expect(invalidItems.body.param).toBe("$.items[0].quantity")
        const after = yield* get(`/checkout_sessions/${created.id}`)
        expect(after.body).toEqual(before.body)
      })))

    it.effect("404 for an unknown session; 422 session_not_modifiable once final", () =>
      run(Effect.gen(function*() {
        expect((yield* post("/checkout_sessions/cs_missing", { buyer })).status).toBe(404)
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        yield* post(`/checkout_sessions/${created.id}/cancel`)
        const late = yield* post(`/checkout_sessions/${created.id}`, { buyer })
        expect(late.status).toBe(422)
        expect(late.body).toMatchObject({ type: "invalid_request", code: "session_not_modifiable" })
      })))
  })
})
