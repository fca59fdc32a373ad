/**
 * A crash right after a route's effect committed, before its answer was sent: the retry with the
 * same Idempotency-Key replays the first answer, and the state is that of one successful request
 * — no second session, order, charge, token, refund or event; stock and coupon counts add up.
 * Every idempotent POST, on every store (memory, SQL on embedded PGlite, SQL on PostgreSQL when
 * TEST_DATABASE_URL is set), with all stores — idempotency keys included — on one database.
 *
 * The crash is `test/support/faults.ts`: the request dies after its route ran, so the middleware
 * neither stores the answer nor releases the key. Only an answer committed with the effect
 * survives it; without one the key would stay in flight and the retry would get 409.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, TestClock } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { IdempotencyStore, type IdempotencyStoreService } from "../../src/idempotency/idempotency-store.ts"
import { freshMemoryDatabase, type MemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import { clientOf, createRequest, idempotencyKey, NOW, updateRequest } from "../support/acp-fixtures.ts"
import { delegateRequestWith } from "../support/delegate.ts"
import { type CrashSwitch, makeCrashSwitch } from "../support/faults.ts"
import { address, buyer, get, paymentData, post, testApp, type TestResponse } from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

/** The delegate fixture's card, allowed for `sessionId` up to any total of these tests. */
const card = (sessionId: string) =>
  delegateRequestWith((request) => {
    request.allowance.checkout_session_id = sessionId
    request.allowance.max_amount = 1_000_000
  })

const isReplay = (response: TestResponse) => response.headers.get("idempotent-replayed") === "true"

/**
 * The idempotency store of `base` whose next answer stored while `failNext` is set is stored and
 * then fails, as a COMMIT that fails after the transaction's last statement would.
 */
const failingAfterTheAnswer = (
  base: Layer.Layer<IdempotencyStore, unknown, MemoryDatabase>,
  failNext: { armed: boolean }
) =>
  Layer.effect(
    IdempotencyStore,
    Effect.map(IdempotencyStore, (store): IdempotencyStoreService => ({
      ...store,
      complete: (scope, claimId, response, expiresAt) =>
        Effect.flatMap(store.complete(scope, claimId, response, expiresAt), (kept) => {
          if (!failNext.armed) return Effect.succeed(kept)
          failNext.armed = false
          return Effect.fail(new StorageError({ reason: "failure", cause: new Error("fails after the answer") }))
        })
    }))
  ).pipe(Layer.provide(base))

const crashSuite = (kind: StoreUnderTest) => {
  const run = <A, E>(
    body: (crash: CrashSwitch) => Effect.Effect<A, E, any>,
    failNext: { armed: boolean } = { armed: false }
  ) =>
    Effect.flatMap(kind.freshStores, (stores) => {
      const crash = makeCrashSwitch()
      const idempotencyStore = failingAfterTheAnswer(stores.idempotencyStore ?? MemoryIdempotencyStore, failNext)
      return Effect.provide(
        body(crash),
        Layer.merge(testApp({ ...stores, idempotencyStore, faults: crash.layer }), freshMemoryDatabase)
      )
    }) as Effect.Effect<A, E, never>

  /**
   * POSTs `body` with `key`, crashing after the route; then again, as a client retries. Answers the
   * retry, checked to be a replay, and a second retry, checked to be the same bytes.
   */
  const crashThenRetry = (
    crash: CrashSwitch,
    path: string,
    body: unknown,
    options: { readonly version?: string } = {}
  ) =>
    Effect.gen(function*() {
      const key = idempotencyKey()
      const send = post(path, body, { headers: { "idempotency-key": key }, ...options })
      const before = crash.crashes()
      yield* crash.arm
      const crashed = yield* send
      expect(crash.crashes()).toBe(before + 1)
      expect(crashed.status).toBe(500)
      const retried = yield* send
      expect(isReplay(retried)).toBe(true)
      const again = yield* send
      expect(again.status).toBe(retried.status)
      expect(again.text).toBe(retried.text)
      return retried
    })

  const stockOf = (productId: string) =>
    Effect.gen(function*() {
      const store = yield* CheckoutStore
      const levels = yield* store.inventory.stockLevels(yield* Clock.currentTimeMillis)
      const level = levels.find((l) => l.productId === productId)
      return { onHand: level?.onHand, reserved: level?.reserved }
    })

  const redemptionsOf = (couponId: string) =>
    Effect.map(Effect.flatMap(CheckoutStore, (store) => store.coupons.redemptions), (counts) => counts.get(couponId))

  const readySession = (items: ReadonlyArray<{ id: string; quantity: number }>, extra: object = {}) =>
    Effect.map(post("/checkout_sessions", { items, buyer, fulfillment_address: address, ...extra }), (created) => {
      expect(created.status).toBe(201)
      return created.body.id as string
    })

  const completedOrder = Effect.gen(function*() {
    const id = yield* readySession([{ id: "mug-ceramic", quantity: 1 }])
    const completed = yield* post(`/checkout_sessions/${id}/complete`, { payment_data: paymentData })
    expect(completed.status).toBe(200)
    return completed.body.order.id as string
  })

  describe(`a crash after the commit, then a retry: ${kind.name}`, () => {
    if (!kind.available) {
      it.skip("needs TEST_DATABASE_URL", () => {})
      return
    }
    kind.register()

    it.effect("create: the first session is answered again; no second session holds stock", () =>
      run((crash) =>
        Effect.gen(function*() {
          const retried = yield* crashThenRetry(crash, "/checkout_sessions", {
            items: [{ id: "print-limited", quantity: 2 }],
            buyer,
            fulfillment_address: address
          })
          expect(retried.status).toBe(201)
          expect(yield* kind.rowCount("checkout_sessions")).toBe(1)
          expect((yield* get(`/checkout_sessions/${retried.body.id}`)).status).toBe(200)
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 3, reserved: 2 })
        })
      ))

    it.effect("the answer is in the effect's transaction: when that transaction fails, neither stays", () => {
      const failNext = { armed: false }
      return run(() =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "print-limited", quantity: 1 }])
          const body = { items: [{ id: "print-limited", quantity: 3 }] }
          const headers = { "idempotency-key": idempotencyKey() }
          failNext.armed = true
          const failed = yield* post(`/checkout_sessions/${id}`, body, { headers })
          expect(failed.status).toBe(500)
          expect(failNext.armed).toBe(false)
          expect((yield* get(`/checkout_sessions/${id}`)).body.line_items[0].item.quantity).toBe(1)
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 3, reserved: 1 })
          // Nothing was kept for the key: the retry runs, and its update stays.
          const retried = yield* post(`/checkout_sessions/${id}`, body, { headers })
          expect([retried.status, isReplay(retried)]).toEqual([200, false])
          expect((yield* get(`/checkout_sessions/${id}`)).body.line_items[0].item.quantity).toBe(3)
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 3, reserved: 3 })
        }), failNext)
    })

    it.effect("create in 2026-04-17 (the key is required): the answer is in that version's format", () =>
      run((crash) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(NOW)
          const retried = yield* crashThenRetry(crash, "/checkout_sessions", createRequest("2026-04-17"), {
            version: "2026-04-17"
          })
          expect(retried.status).toBe(201)
          expect(retried.body.line_items.map((line: { item: { id: string } }) => line.item.id)).toEqual([
            "tshirt-classic",
            "mug-ceramic"
          ])
          expect(yield* kind.rowCount("checkout_sessions")).toBe(1)
          expect(yield* stockOf("mug-ceramic")).toEqual({ onHand: 250, reserved: 2 })
        })
      ))

    it.effect("update of the items (under locks) and of the option (optimistic): replayed, stock as one update", () =>
      run((crash) =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "print-limited", quantity: 1 }])
          const items = yield* crashThenRetry(crash, `/checkout_sessions/${id}`, {
            items: [{ id: "print-limited", quantity: 3 }]
          })
          expect(items.status).toBe(200)
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 3, reserved: 3 })
          const option = yield* crashThenRetry(crash, `/checkout_sessions/${id}`, {
            fulfillment_option_id: "express"
          })
          expect(option.status).toBe(200)
          expect(option.body.fulfillment_option_id).toBe("express")
          expect((yield* get(`/checkout_sessions/${id}`)).body.fulfillment_option_id).toBe("express")
        })
      ))

    it.effect("update in 2026-04-17: replayed in that version's format", () =>
      run((crash) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(NOW)
          const created = yield* clientOf("2026-04-17").created(createRequest("2026-04-17"))
          const retried = yield* crashThenRetry(
            crash,
            `/checkout_sessions/${created.id}`,
            updateRequest("2026-04-17"),
            { version: "2026-04-17" }
          )
          expect(retried.status).toBe(200)
          expect(retried.body.selected_fulfillment_options[0].option_id).toBe("express")
        })
      ))

    it.effect("cancel: the 200 is replayed (not 405), the stock released once", () =>
      run((crash) =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "print-limited", quantity: 2 }])
          const retried = yield* crashThenRetry(crash, `/checkout_sessions/${id}/cancel`, undefined)
          expect(retried.status).toBe(200)
          expect(retried.body.status).toBe("canceled")
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 3, reserved: 0 })
        })
      ))

    it.effect("complete: the same order, one charge, one event, stock and the coupon counted once", () =>
      run((crash) =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "print-limited", quantity: 2 }], {
            discounts: { codes: ["WELCOME10"] }
          })
          const retried = yield* crashThenRetry(crash, `/checkout_sessions/${id}/complete`, {
            payment_data: paymentData
          })
          expect(retried.status).toBe(200)
          expect(retried.body.status).toBe("completed")
          expect(yield* kind.rowCount("orders")).toBe(1)
          expect(yield* kind.rowCount("processor_charges")).toBe(1)
          expect(yield* kind.rowCount("webhook_outbox")).toBe(1)
          expect((yield* get(`/orders/${retried.body.order.id}`)).status).toBe(200)
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 1, reserved: 0 })
          expect(yield* redemptionsOf("coupon_welcome10")).toBe(1)
        })
      ))

    it.effect("complete with a vt_ token: the token is spent once, the order the same", () =>
      run((crash) =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "mug-ceramic", quantity: 1 }])
          const token = yield* post("/agentic_commerce/delegate_payment", card(id))
          expect(token.status).toBe(201)
          const retried = yield* crashThenRetry(crash, `/checkout_sessions/${id}/complete`, {
            payment_data: {
              handler_id: "card_tokenized",
              instrument: { type: "card", credential: { type: "spt", token: token.body.id } }
            }
          })
          expect(retried.status).toBe(200)
          expect(yield* kind.rowCount("orders")).toBe(1)
          expect(yield* kind.rowCount("processor_charges")).toBe(1)
        })
      ))

    it.effect("a declined complete: the 402 is replayed, tried once, the session payable again", () =>
      run((crash) =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "print-limited", quantity: 1 }])
          const declined = {
            payment_data: {
              ...paymentData,
              instrument: { ...paymentData.instrument, credential: { type: "spt", token: "tok_chargeDeclined" } }
            }
          }
          const retried = yield* crashThenRetry(crash, `/checkout_sessions/${id}/complete`, declined)
          expect(retried.status).toBe(402)
          expect(retried.body.code).toBe("payment_declined")
          // The processor keeps the declined attempt under its key: one, not one per try.
          expect(yield* kind.rowCount("processor_charges")).toBe(1)
          expect(yield* stockOf("print-limited")).toEqual({ onHand: 3, reserved: 1 })
          const paid = yield* post(`/checkout_sessions/${id}/complete`, { payment_data: paymentData })
          expect(paid.status).toBe(200)
          expect(yield* kind.rowCount("processor_charges")).toBe(2)
          expect(yield* kind.rowCount("orders")).toBe(1)
        })
      ))

    it.effect("delegate payment: the same token is answered; no second token is stored", () =>
      run((crash) =>
        Effect.gen(function*() {
          const id = yield* readySession([{ id: "mug-ceramic", quantity: 1 }])
          const retried = yield* crashThenRetry(crash, "/agentic_commerce/delegate_payment", card(id))
          expect(retried.status).toBe(201)
          expect(retried.body.id).toMatch(/^vt_/)
          expect(yield* kind.rowCount("vault_tokens")).toBe(1)
        })
      ))

    it.effect("a product's create: the 201 is replayed (not 409 of its own write); one product", () =>
      run((crash) =>
        Effect.gen(function*() {
          const lamp = {
            id: "lamp-crash",
            title: "Desk Lamp",
            variants: [{ id: "lamp-crash-black", unit_amount: 3500, stock: 5 }]
          }
          const retried = yield* crashThenRetry(crash, "/products", lamp)
          expect(retried.status, retried.text).toBe(201)
          expect(retried.body).toMatchObject({ id: "lamp-crash", version: 1 })
          expect(retried.headers.get("etag")).toBe("\"1\"")
          expect((yield* get("/products/lamp-crash")).body.variants).toHaveLength(1)
        })
      ))

    it.effect("order actions and refunds: each answered again, one event each, one refund", () =>
      run((crash) =>
        Effect.gen(function*() {
          const order = yield* completedOrder
          const confirmed = yield* crashThenRetry(crash, `/orders/${order}/confirm`, undefined)
          expect([confirmed.status, confirmed.body.status]).toEqual([200, "confirmed"])
          const shipped = yield* crashThenRetry(crash, `/orders/${order}/ship`, {
            carrier: "UPS",
            tracking_number: "1Z999"
          })
          expect([shipped.status, shipped.body.status]).toEqual([200, "shipped"])
          const refunded = yield* crashThenRetry(crash, `/orders/${order}/refunds`, {
            type: "original_payment",
            amount: 100
          })
          expect(refunded.status).toBe(200)
          expect(refunded.body.refunds).toEqual([{ type: "original_payment", amount: 100 }])
          expect((yield* get(`/orders/${order}`)).body.refunds).toHaveLength(1)
          // order_create, then one order_update per change
          expect(yield* kind.rowCount("webhook_outbox")).toBe(4)
        })
      ))
  })
}

for (const kind of storesUnderTest) crashSuite(kind)
