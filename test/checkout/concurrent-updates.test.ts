/**
 * Updates that keep the items run without a transaction (read, reduce, write if unchanged) and
 * fall back to the locked path when the session changed in between. Concurrent updates of one
 * session must still each land: none is lost, whatever the store.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { address, buyer, get, post, testApp } from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

const concurrentUpdatesSuite = (storeUnderTest: StoreUnderTest) => {
  const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
    Effect.flatMap(storeUnderTest.freshStores, (stores) => Effect.provide(effect, testApp(stores))) as Effect.Effect<
      A,
      E,
      never
    >

  it.effect("12 concurrent updates, of the buyer and of the option: none is lost", () =>
    run(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", {
        items: [{ id: "mug-ceramic", quantity: 1 }],
        fulfillment_address: address,
        buyer
      })
      expect(created.status).toBe(201)
      const id = created.body.id as string
      const options = (created.body.fulfillment_options as ReadonlyArray<{ id: string }>).map((o) => o.id)
      expect(options.length).toBeGreaterThan(1)
      const last = options[options.length - 1]!
      // Eleven requests change the buyer, one chooses the option, all at once from the same
      // version of the session: a write made from a stale read would bring the option back.
      const responses = yield* Effect.all(
        [
          ...Array.from({ length: 11 }, (_, i) =>
            post(`/checkout_sessions/${id}`, { buyer: { ...buyer, first_name: `Ada${i}` } })),
          post(`/checkout_sessions/${id}`, { fulfillment_option_id: last })
        ],
        { concurrency: "unbounded" }
      )
      expect(responses.map((r) =>
        r.status
      )).toEqual(Array.from({ length: 12 }, () => 200))
      const final = yield* get(`/checkout_sessions/${id}`)
      expect(final.body.fulfillment_option_id).toBe(last)
      // The option request carried no buyer: the buyer is one that some request wrote.
      const written = responses.slice(0, 11).map((r) => r.body.buyer.first_name as string)
      expect(written).toContain(final.body.buyer.first_name)
    })))

  it.effect("an update that fails answers as the locked path would; the session is unchanged", () =>
    run(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", {
        items: [{ id: "mug-ceramic", quantity: 1 }],
        fulfillment_address: address
      })
      const id = created.body.id as string
      const refused = yield* post(`/checkout_sessions/${id}`, { fulfillment_option_id: "no_such_option" })
      expect(refused.status).toBe(400)
      expect(refused.body.param).toBe("$.fulfillment_option_id")
      expect((yield* get(`/checkout_sessions/${id}`)).body).toEqual(created.body)
      expect((yield* post("/checkout_sessions/cs_absent", { buyer })).status).toBe(404)
    })))
}

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`concurrent updates on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()
    concurrentUpdatesSuite(storeUnderTest)
  })
}
