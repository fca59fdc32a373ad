/**
 * A process decides the next step of a session it wrote on the session as it wrote it, without
 * reading it again (`src/checkout/written-sessions.ts`); whatever another process (or
 * another path of this one) wrote since, the answer is the one a read would give.
 *
 * One process: the store's reads and conditional writes are counted. Two processes: two
 * applications, each with its own checkout service, on one database (the SQL stores).
 */
import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, Layer, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { makeWrittenSessions } from "../../src/checkout/written-sessions.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { address, buyer, createReadySession, get, paymentData, post, testApp } from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

type App = Context.Context<Layer.Layer.Success<ReturnType<typeof testApp>>>

interface StoreCalls {
  /** Reads of the session with its version and payment side, without locking. */
  forPayment: number
  /** Reads under the session's lock: a conditional write that did not hold, or a locked path. */
  locked: number
  /** Updates written only if the session is still at the version decided on. */
  conditional: number
}

/** The store of `layer`, its session reads for a write and its conditional updates counted in `calls`. */
const countingCalls = <E, R>(layer: Layer.Layer<CheckoutStore, E, R>, calls: StoreCalls) =>
  Layer.effect(
    CheckoutStore,
    Effect.map(CheckoutStore, (store) => ({
      ...store,
      sessions: {
        ...store.sessions,
        lock: (id: string) => Effect.suspend(() => (calls.locked++, store.sessions.lock(id)))
      },
      readSessionForPayment: (id: string) =>
        Effect.suspend(() => (calls.forPayment++, store.readSessionForPayment(id))),
      lockSessionForPayment: (id: string) => Effect.suspend(() => (calls.locked++, store.lockSessionForPayment(id))),
      updateSessionKeepingItems: (...args: Parameters<typeof store.updateSessionKeepingItems>) =>
        Effect.suspend(() => (calls.conditional++, store.updateSessionKeepingItems(...args)))
    }))
  ).pipe(Layer.provide(layer))

const totalOf = (body: { totals: ReadonlyArray<{ type: string; amount: number }> }) =>
  body.totals.find((total) => total.type === "total")!.amount

const oneProcessSuite = (storeUnderTest: StoreUnderTest) => {
  const run = <A, E>(test: (calls: StoreCalls) => Effect.Effect<A, E, any>) =>
    Effect.flatMap(storeUnderTest.freshStores, (stores) => {
      const calls: StoreCalls = { forPayment: 0, locked: 0, conditional: 0 }
      const store = countingCalls(stores.store ?? MemoryCheckoutStore, calls)
      return Effect.provide(test(calls), testApp({ ...stores, store }))
    }) as Effect.Effect<A, E, never>

  it.effect("create → update → complete reads the session neither for the update nor for the payment", () =>
    run((calls) =>
      Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const updated = yield* post(`/checkout_sessions/${created.id}`, { fulfillment_option_id: "express" })
        expect(updated.status).toBe(200)
        const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
        expect(completed.status).toBe(200)
        expect(completed.body.status).toBe("completed")
        expect(calls).toEqual({ forPayment: 0, locked: 0, conditional: 1 })
        // Completed: the next step reads, and is refused as completed.
        const again = yield* post(`/checkout_sessions/${created.id}`, { buyer })
        expect(again.status).toBe(422)
        expect(again.body.code).toBe("session_not_modifiable")
        expect(calls.forPayment).toBe(1)
      })
    ))

  it.effect("a change under the lock drops what the process kept: the next update reads", () =>
    run((calls) =>
      Effect.gen(function*() {
        const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const items = yield* post(`/checkout_sessions/${created.id}`, { items: [{ id: "mug-ceramic", quantity: 2 }] })
        expect(items.status).toBe(200)
        const updated = yield* post(`/checkout_sessions/${created.id}`, { fulfillment_option_id: "express" })
        expect(updated.status).toBe(200)
        expect(updated.body.line_items[0].item.quantity).toBe(2)
        // One conditional write: the update did not decide on the session as created.
        expect(calls).toEqual({ forPayment: 1, locked: 1, conditional: 1 })
        // The update read the payment side with the session and kept both: completing reads nothing.
        const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
        expect(completed.status).toBe(200)
        expect(calls).toEqual({ forPayment: 1, locked: 1, conditional: 1 })
      })
    ))
}

const twoProcessSuite = (storeUnderTest: StoreUnderTest) => {
  /** Runs `test` with two applications on one fresh database, the store calls of the first counted. */
  const run = <A, E>(test: (a: App, b: App, calls: StoreCalls) => Effect.Effect<A, E, never>) =>
    Effect.scoped(Effect.gen(function*() {
      const stores = yield* storeUnderTest.freshStores
      const calls: StoreCalls = { forPayment: 0, locked: 0, conditional: 0 }
      const a = yield* Layer.build(testApp({ ...stores, store: countingCalls(stores.store!, calls) }))
      const b = yield* Layer.build(testApp(stores))
      return yield* test(a, b, calls)
    })) as Effect.Effect<A, E, never>
  const on = (app: App) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, app)

  it.effect("an update decided on what this process wrote, after another changed it, keeps the other's change", () =>
    run((a, b) =>
      Effect.gen(function*() {
        const created = yield* on(a)(createReadySession([{ id: "mug-ceramic", quantity: 1 }]))
        const express = yield* on(b)(post(`/checkout_sessions/${created.id}`, { fulfillment_option_id: "express" }))
        expect(express.status).toBe(200)
        const renamed = yield* on(a)(
          post(`/checkout_sessions/${created.id}`, { buyer: { ...buyer, first_name: "Grace" } })
        )
        expect(renamed.status).toBe(200)
        expect(renamed.body.fulfillment_option_id).toBe("express")
        expect(renamed.body.buyer.first_name).toBe("Grace")
        const stored = yield* on(b)(get(`/checkout_sessions/${created.id}`))
        expect(stored.body).toEqual(renamed.body)
      })
    ))

  it.effect("a refusal on what this process wrote is decided again on the stored session", () =>
    run((a, b) =>
      Effect.gen(function*() {
        const created = yield* on(a)(post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }] }))
        expect(created.status).toBe(201)
        const id = created.body.id as string
        // Without an address the session offers no option to choose.
        const early = yield* on(b)(post(`/checkout_sessions/${id}`, { fulfillment_option_id: "express" }))
        expect(early.status).toBe(400)
        const addressed = yield* on(b)(post(`/checkout_sessions/${id}`, { fulfillment_address: address }))
        expect(addressed.status).toBe(200)
        // a wrote the session without an address: on that the choice is refused; on the stored one it is not.
        const chosen = yield* on(a)(post(`/checkout_sessions/${id}`, { fulfillment_option_id: "express" }))
        expect(chosen.status).toBe(200)
        expect(chosen.body.fulfillment_option_id).toBe("express")
        expect(chosen.body.fulfillment_address).toEqual(addressed.body.fulfillment_address)
      })
    ))

  it.effect("completing after another process changed the session charges the stored total", () =>
    run((a, b, calls) =>
      Effect.gen(function*() {
        const created = yield* on(a)(createReadySession([{ id: "mug-ceramic", quantity: 1 }]))
        const express = yield* on(b)(post(`/checkout_sessions/${created.id}`, { fulfillment_option_id: "express" }))
        expect(express.status).toBe(200)
        expect(totalOf(express.body)).not.toBe(totalOf(created))
        const completed = yield* on(a)(post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData }))
        expect(completed.status).toBe(200)
        expect(completed.body.fulfillment_option_id).toBe("express")
        expect(totalOf(completed.body)).toBe(totalOf(express.body))
        // What a wrote was stale: the payment went on from a read, not under the lock.
        expect(calls).toEqual({ forPayment: 1, locked: 0, conditional: 0 })
        // And the other way round: b completes a session a wrote last; a's next step is refused.
        const second = yield* on(a)(createReadySession([{ id: "mug-ceramic", quantity: 1 }]))
        const paid = yield* on(b)(post(`/checkout_sessions/${second.id}/complete`, { payment_data: paymentData }))
        expect(paid.status).toBe(200)
        const late = yield* on(a)(post(`/checkout_sessions/${second.id}`, { fulfillment_option_id: "express" }))
        expect(late.status).toBe(422)
        expect(late.body.code).toBe("session_not_modifiable")
        const twice = yield* on(a)(post(`/checkout_sessions/${second.id}/complete`, { payment_data: paymentData }))
        expect(twice.status).toBe(409)
        expect(twice.body.code).toBe("session_completed")
      })
    ))
}

describe("the sessions a process keeps", () => {
  const written = (id: string, version: number) => ({
    session: { id } as Session,
    version,
    latestAttempt: Option.none(),
    couponHolds: []
  })

  it("are taken once, the latest put of each, and the oldest goes past the bound", () => {
    const kept = makeWrittenSessions(2)
    kept.put(written("cs_a", 1))
    kept.put(written("cs_a", 2))
    expect(kept.take("cs_a")?.version).toBe(2)
    expect(kept.take("cs_a")).toBeUndefined()
    kept.put(written("cs_a", 3))
    kept.put(written("cs_b", 1))
    // Put again, cs_a is the newest: cs_b goes when a third session comes.
    kept.put(written("cs_a", 4))
    kept.put(written("cs_c", 1))
    expect(kept.take("cs_b")).toBeUndefined()
    expect(kept.take("cs_a")?.version).toBe(4)
    expect(kept.take("cs_c")?.version).toBe(1)
  })
})

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`sessions a process wrote, on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()
    oneProcessSuite(storeUnderTest)
    // Two applications share a database only on the SQL stores (each memory one is its own).
    if (storeUnderTest.name !== "memory") twoProcessSuite(storeUnderTest)
  })
}
