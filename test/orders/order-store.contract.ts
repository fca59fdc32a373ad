/**
 * The contract of `OrderStore` (orders + outbox) and `ReceivedEventsStore`, run against every
 * implementation.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { makeOrderEvent } from "../../src/orders/model/order-event.ts"
import { makeOrder } from "../../src/orders/model/order-from-checkout.ts"
import type { Order } from "../../src/orders/model/order.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { ReceivedEventsStore } from "../../src/webhook-receiver/received-events-store.ts"

const T0 = Date.parse("2026-01-01T00:00:00.000Z")
let counter = 0
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}_${++counter}`

export const sampleOrder = (id = unique("ord_")): Order =>
  makeOrder({
    id,
    checkoutSessionId: unique("cs_"),
    permalinkUrl: `https://merchant.test/orders/${id}`,
    lineItems: [{
      id: "li_1",
      item: { id: "tshirt-classic", quantity: 2 },
      base_amount: 5000,
      discount: 0,
      subtotal: 5000,
      tax: 444,
      total: 5444,
      title: "Classic Cotton T-Shirt",
      kind: "physical"
    }],
    totals: [{ type: "total", display_text: "Total", amount: 5444 }]
  })

/** Stores an order and `updates` + 1 events for it; returns the order and the event ids. */
const orderWithEvents = (updates: number, now = T0) =>
  Effect.gen(function*() {
    const store = yield* OrderStore
    const order = sampleOrder()
    return yield* store.transaction(Effect.gen(function*() {
      yield* store.saveOrder({ order, sessionId: order.checkout_session_id, createdAt: now })
      const ids: Array<string> = []
      for (let i = 0; i <= updates; i++) {
        const event = yield* store.enqueueEvent({
          id: unique("evt_"),
          payload: makeOrderEvent(i === 0 ? "order_create" : "order_update", order),
          now
        })
        ids.push(event.id)
      }
      return { order, ids }
    }))
  })

export const orderStoreContract = (
  name: string,
  stores: Layer.Layer<OrderStore | ReceivedEventsStore, unknown>
) =>
  describe(name, () => {
    layer(stores, { timeout: 60_000 })((it) => {
      it.effect("saves, reads and replaces orders; a failed transaction leaves nothing", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          const order = sampleOrder()
          yield* store.saveOrder({ order, sessionId: order.checkout_session_id, createdAt: T0 })
          expect(Option.getOrThrow(yield* store.getOrder(order.id))).toEqual({
            order,
            sessionId: order.checkout_session_id,
            createdAt: T0
          })
          const confirmed: Order = { ...order, status: "confirmed" }
          yield* store.saveOrder({ order: confirmed, sessionId: order.checkout_session_id, createdAt: T0 + 5 })
          expect(Option.getOrThrow(yield* store.lockOrder(order.id)).order.status).toBe("confirmed")
          expect(Option.getOrThrow(yield* store.getOrder(order.id)).createdAt).toBe(T0)
          expect(yield* store.getOrder("ord_absent")).toEqual(Option.none())

          const rolledBack = sampleOrder()
          const failed = yield* store.transaction(Effect.gen(function*() {
            yield* store.saveOrder({ order: rolledBack, sessionId: rolledBack.checkout_session_id, createdAt: T0 })
            yield* store.enqueueEvent({
              id: unique("evt_"),
              payload: makeOrderEvent("order_create", rolledBack),
              now: T0
            })
            return yield* Effect.fail("boom" as const)
          })).pipe(Effect.flip)
          expect(failed).toBe("boom")
          expect(yield* store.getOrder(rolledBack.id)).toEqual(Option.none())
          expect(yield* store.listEvents({ orderId: rolledBack.id, limit: 10 })).toEqual([])
        }))

      it.effect("listOrders: newest first (then by id), by status, by exact id or session id, limited", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          // Created after every other case's order, so that these come first.
          const later = Date.parse("2900-01-01T00:00:00.000Z")
          const save = (order: Order, createdAt: number) =>
            Effect.as(store.saveOrder({ order, sessionId: order.checkout_session_id, createdAt }), {
              order,
              sessionId: order.checkout_session_id,
              createdAt
            })
          // Two orders created at the same instant: the greater id first (ids differing in their
          // last letter only, which every collation orders alike).
          const base = unique("ord_")
          const oldest = yield* save(sampleOrder(), later)
          const tiedA = yield* save({ ...sampleOrder(`${base}a`), status: "manual_review" }, later + 1)
          const tiedB = yield* save(sampleOrder(`${base}b`), later + 1)
          const newest = yield* save({ ...sampleOrder(), status: "manual_review" }, later + 2)

          expect(yield* store.listOrders({ limit: 4 })).toEqual([newest, tiedB, tiedA, oldest])
          expect(yield* store.listOrders({ limit: 2 })).toEqual([newest, tiedB])
          expect(yield* store.listOrders({ limit: 0 })).toEqual([])
          expect(yield* store.listOrders({ status: "manual_review", limit: 2 })).toEqual([newest, tiedA])

          // A replaced order keeps its creation time and is listed in the status it now has.
          const confirmed = { ...oldest, order: { ...oldest.order, status: "confirmed" as const } }
          yield* store.saveOrder({ ...confirmed, createdAt: later + 50 })
          expect(yield* store.listOrders({ limit: 4 })).toEqual([newest, tiedB, tiedA, confirmed])
          expect(yield* store.listOrders({ status: "confirmed", limit: 1 })).toEqual([confirmed])

          // Search: the order's id or its checkout session id, exactly, trimmed.
          expect(yield* store.listOrders({ search: tiedA.order.id, limit: 10 })).toEqual([tiedA])
          expect(yield* store.listOrders({ search: `  ${tiedA.sessionId}\t`, limit: 10 })).toEqual([tiedA])
          expect(yield* store.listOrders({ search: base, limit: 10 })).toEqual([])
          expect(yield* store.listOrders({ search: tiedA.order.id.toUpperCase(), limit: 10 })).toEqual([])
          expect(yield* store.listOrders({ search: tiedA.order.id, status: "manual_review", limit: 10 }))
            .toEqual([tiedA])
          expect(yield* store.listOrders({ search: tiedA.order.id, status: "created", limit: 10 })).toEqual([])
          expect(yield* store.listOrders({ search: "ord_absent", limit: 10 })).toEqual([])
          // A blank search is no search.
          expect(yield* store.listOrders({ search: "   ", limit: 2 })).toEqual([newest, tiedB])
        }))

      it.effect("saveOrderWithEvent stores the order and its next event in one step, or neither", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          const order = sampleOrder()
          const stored = { order, sessionId: order.checkout_session_id, createdAt: T0 }
          const created = yield* store.saveOrderWithEvent(stored, {
            id: unique("evt_"),
            payload: makeOrderEvent("order_create", order),
            now: T0
          })
          expect(Option.getOrThrow(yield* store.getOrder(order.id))).toEqual(stored)
          const confirmed: Order = { ...order, status: "confirmed" }
          const updated = yield* store.saveOrderWithEvent({ ...stored, order: confirmed }, {
            id: unique("evt_"),
            payload: makeOrderEvent("order_update", confirmed),
            now: T0 + 10
          })
          expect(Option.getOrThrow(yield* store.getOrder(order.id))).toEqual({ ...stored, order: confirmed })
          // What it returns is what is stored.
          expect(yield* store.listEvents({ orderId: order.id, limit: 10 })).toEqual([updated, created])
          expect([created.sequence, updated.sequence]).toEqual([1, 2])
          expect(updated).toMatchObject({ type: "order_update", state: "pending", attempts: 0, nextAttemptAt: T0 + 10 })

          // A duplicate event id fails the step: the new order is not stored either.
          const other = sampleOrder()
          const failed = yield* Effect.flip(store.saveOrderWithEvent(
            { order: other, sessionId: other.checkout_session_id, createdAt: T0 },
            { id: created.id, payload: makeOrderEvent("order_create", other), now: T0 }
          ))
          expect(failed._tag).toBe("StorageError")
          expect(yield* store.getOrder(other.id)).toEqual(Option.none())
          expect(yield* store.listEvents({ orderId: other.id, limit: 10 })).toEqual([])
        }))

      it.effect("numbers events per order and claims only the lowest pending one of each order", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          const a = yield* orderWithEvents(2)
          const b = yield* orderWithEvents(0)
          const listed = yield* store.listEvents({ orderId: a.order.id, limit: 10 })
          expect(listed.map((e) => e.sequence)).toEqual([3, 2, 1])
          expect(listed[2]).toMatchObject({
            type: "order_create",
            state: "pending",
            attempts: 0,
            nextAttemptAt: T0,
            firstAttemptAt: null,
            createdAt: T0,
            deliveredAt: null,
            lastError: null,
            lastStatus: null
          })
          expect(listed[2]!.payload).toEqual(makeOrderEvent("order_create", a.order))

          const claimed = yield* store.claimDue(T0, 100, 60_000)
          const mine = claimed.filter((e) => e.orderId === a.order.id || e.orderId === b.order.id)
          expect(mine.map((e) => e.id).sort()).toEqual([a.ids[0]!, b.ids[0]!].sort())
          expect(mine[0]).toMatchObject({ attempts: 1, firstAttemptAt: T0 })
          // Leased: nobody claims them again, and a's later events wait.
          const again = yield* store.claimDue(T0 + 1000, 100, 60_000)
          expect(again.filter((e) => e.orderId === a.order.id || e.orderId === b.order.id)).toEqual([])

          // Stale claims cannot record a result; the current one can.
          expect(
            yield* store.finishAttempts([
              {
                id: a.ids[0]!,
                attempt: 7,
                result: { state: "delivered", nextAttemptAt: T0, lastStatus: 200, lastError: null, at: T0 }
              }
            ])
          ).toEqual([false])
          expect(
            yield* store.finishAttempts([
              {
                id: a.ids[0]!,
                attempt: 1,
                result: { state: "pending", nextAttemptAt: T0 + 5000, lastStatus: 500, lastError: "HTTP 500", at: T0 }
              }
            ])
          ).toEqual([true])
          expect((yield* store.claimDue(T0 + 4999, 100, 60_000)).filter((e) => e.orderId === a.order.id)).toEqual([])
          const retried = (yield* store.claimDue(T0 + 5000, 100, 60_000)).filter((e) => e.orderId === a.order.id)
          expect(retried).toMatchObject([{ id: a.ids[0], attempts: 2, firstAttemptAt: T0, lastStatus: 500 }])
          yield* store.finishAttempts([
            {
              id: a.ids[0]!,
              attempt: 2,
              result: { state: "delivered", nextAttemptAt: T0 + 6000, lastStatus: 200, lastError: null, at: T0 + 6000 }
            }
          ])
          expect(Option.getOrThrow(yield* store.getEvent(a.ids[0]!))).toMatchObject({
            state: "delivered",
            deliveredAt: T0 + 6000
          })
          const next = (yield* store.claimDue(T0 + 6000, 100, 60_000)).filter((e) => e.orderId === a.order.id)
          expect(next.map((e) => e.id)).toEqual([a.ids[1]])
        }))

      it.effect("finishAttempts records a whole round at once, each only under its current claim", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          const when = T0 + 5 * 86_400_000
          const orders = [
            yield* orderWithEvents(0, when),
            yield* orderWithEvents(0, when),
            yield* orderWithEvents(0, when)
          ]
          const ids = orders.map((o) => o.ids[0]!)
          const claimed = (yield* store.claimDue(when, 100, 60_000)).filter((e) => ids.includes(e.id))
          expect(claimed.map((e) => e.id).sort()).toEqual([...ids].sort())
          const [delivered, retried, stale] = ids
          expect(
            yield* store.finishAttempts([
              {
                id: delivered!,
                attempt: 1,
                result: { state: "delivered", nextAttemptAt: when, lastStatus: 204, lastError: null, at: when + 1 }
              },
              {
                id: stale!,
                attempt: 3,
                result: { state: "delivered", nextAttemptAt: when, lastStatus: 200, lastError: null, at: when }
              },
              {
                id: retried!,
                attempt: 1,
                result: {
                  state: "pending",
                  nextAttemptAt: when + 900,
                  lastStatus: null,
                  lastError: "ECONNRESET",
                  at: when
                }
              }
            ])
          ).toEqual([true, false, true])
          expect(Option.getOrThrow(yield* store.getEvent(delivered!)))
            .toMatchObject({ state: "delivered", deliveredAt: when + 1, lastStatus: 204, lastError: null })
          expect(Option.getOrThrow(yield* store.getEvent(retried!)))
            .toMatchObject({
              state: "pending",
              nextAttemptAt: when + 900,
              lastStatus: null,
              lastError: "ECONNRESET",
              deliveredAt: null
            })
          // The stale claim changed nothing: still pending, still leased.
          expect(Option.getOrThrow(yield* store.getEvent(stale!))).toMatchObject({
            state: "pending",
            attempts: 1,
            lastStatus: null
          })
          expect((yield* store.claimDue(when + 900, 100, 60_000)).map((e) => e.id).filter((id) => ids.includes(id)))
            .toEqual([retried])
          expect(yield* store.finishAttempts([])).toEqual([])
        }))

      it.effect("an expired lease makes the event claimable again", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          const later = T0 + 10 * 86_400_000
          const a = yield* orderWithEvents(0, later)
          expect((yield* store.claimDue(later, 100, 1000)).map((e) => e.id)).toContain(a.ids[0])
          expect((yield* store.claimDue(later + 999, 100, 1000)).map((e) => e.id)).not.toContain(a.ids[0])
          const reclaimed = (yield* store.claimDue(later + 1000, 100, 1000)).filter((e) => e.id === a.ids[0])
          expect(reclaimed).toMatchObject([{ attempts: 2 }])
        }))

      it.effect("dead letters: listed by state, redriven once, counted", () =>
        Effect.gen(function*() {
          const store = yield* OrderStore
          const when = T0 + 20 * 86_400_000
          const a = yield* orderWithEvents(1, when)
          const before = yield* store.countByState
          const [claimed] = (yield* store.claimDue(when, 100, 60_000)).filter((e) => e.orderId === a.order.id)
          yield* store.finishAttempts([
            {
              id: claimed!.id,
              attempt: 1,
              result: { state: "dead", nextAttemptAt: when, lastStatus: 400, lastError: "HTTP 400", at: when }
            }
          ])
          const dead = yield* store.listEvents({ state: "dead", orderId: a.order.id, limit: 10 })
          expect(dead.map((e) => e.id)).toEqual([a.ids[0]])
          // A dead event no longer holds back the order's later events.
          expect((yield* store.claimDue(when, 100, 60_000)).filter((e) => e.orderId === a.order.id).map((e) => e.id))
            .toEqual([a.ids[1]])
          const after = yield* store.countByState
          expect(after.dead - before.dead).toBe(1)
          expect(after.pending - before.pending).toBe(-1) // counted after both were queued: one went dead

          const redriven = Option.getOrThrow(yield* store.redrive(a.ids[0]!, when + 1))
          expect(redriven).toMatchObject({
            state: "pending",
            attempts: 0,
            firstAttemptAt: null,
            nextAttemptAt: when + 1,
            lastStatus: 400
          })
          expect(yield* store.redrive(a.ids[0]!, when + 2)).toEqual(Option.none())
          expect(yield* store.redrive("evt_absent", when)).toEqual(Option.none())
        }))

      it.effect("receiver: one event per Request-Id and per body; latest state by receipt; create never overrides", () =>
        Effect.gen(function*() {
          const store = yield* ReceivedEventsStore
          const orderId = unique("ord_")
          const event = (requestId: string, type: string, status: string, at: number) => ({
            requestId,
            bodyHash: `${requestId}-hash`,
            orderId,
            type,
            status,
            payload: { type, data: { id: orderId, status } },
            receivedAt: at
          })
          const r1 = unique("evt_")
          const r2 = unique("evt_")
          const r3 = unique("evt_")
          expect(yield* store.recordEvent(event(r1, "order_update", "confirmed", T0))).toBe("stored")
          expect(yield* store.recordEvent(event(r1, "order_update", "confirmed", T0 + 1))).toBe("duplicate")
          expect(
            yield* store.recordEvent({ ...event(unique("evt_"), "order_update", "x", T0 + 1), bodyHash: `${r1}-hash` })
          )
            .toBe("duplicate")
          expect(yield* store.recordEvent(event(r2, "order_update", "shipped", T0 + 2))).toBe("stored")
          expect(yield* store.recordEvent(event(r3, "order_create", "created", T0 + 3))).toBe("stored")
          expect(Option.getOrThrow(yield* store.getOrder(orderId))).toEqual({
            orderId,
            status: "shipped",
            lastRequestId: r2,
            payload: { type: "order_update", data: { id: orderId, status: "shipped" } },
            updatedAt: T0 + 2
          })
          expect((yield* store.listEvents(orderId)).map((e) => e.requestId)).toEqual([r1, r2, r3])
          expect((yield* store.listOrders(1000)).some((o) => o.orderId === orderId)).toBe(true)
          expect(yield* store.getOrder("ord_absent")).toEqual(Option.none())
        }))
    })
  })
