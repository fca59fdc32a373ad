/**
 * The behaviour every `CheckoutStore` must have. `checkoutStoreContract(name, layer)` registers the
 * cases for one implementation. Each case uses its own ids, so the cases share one store.
 */
import { expect, layer } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { CheckoutStore, type PaidCompletion, type PaymentAttempt } from "../../src/checkout/checkout-store.ts"
import { ACTIVE_STATUSES, type Session, toCheckoutSession } from "../../src/checkout/session-model.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { claimLost } from "../../src/idempotency/idempotent-answer-service.ts"
import { makeOrderEvent } from "../../src/orders/order-event.ts"
import { makeOrder } from "../../src/orders/order-from-checkout.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { claimedKey } from "../support/idempotency-claims.ts"

const attemptOf = (sessionId: string, sequence: number): PaymentAttempt => ({
  sessionId,
  sequence,
  idempotencyKey: `${sessionId}:${sequence}`,
  amount: 4883,
  currency: "usd",
  credentialRef: "vt_abc",
  state: "pending",
  chargeId: undefined,
  createdAt: 1_000 * sequence,
  updatedAt: 1_000 * sequence
})

/** The latest payment attempt of a stored session, as a payment step sees it. */
const latestAttemptOf = (sessionId: string) =>
  Effect.flatMap(CheckoutStore, (store) =>
    store.transaction(store.lockSessionForPayment(sessionId)).pipe(
      Effect.map((found) => Option.flatMap(found, (payment) => payment.latestAttempt))
    ))

const uid = (prefix: string) => `${prefix}_${randomUUID().replaceAll("-", "")}`

const FAR_FUTURE = "2099-01-01T00:00:00.000Z"

const iso = (epochMillis: number) => new Date(epochMillis).toISOString()

/** A complete session satisfying the `Session` schema (every optional part present). */
export const makeSession = (id: string, overrides: Partial<Session> = {}): Session => ({
  id,
  status: "ready_for_payment",
  currency: "usd",
  line_items: [
    {
      id: `li_${id}`,
      item: { id: "prod_tshirt", quantity: 2 },
      base_amount: 5000,
      discount: 500,
      subtotal: 4500,
      tax: 383,
      total: 4883
    }
  ],
  fulfillment_options: [
    {
      type: "shipping",
      id: "ship_standard",
      title: "Standard",
      subtitle: "3-5 business days",
      carrier: "USPS",
      earliest_delivery_time: "2026-02-03T12:00:00.000Z",
      latest_delivery_time: "2026-02-05T12:00:00.000Z",
      subtotal: 500,
      tax: 0,
      total: 500
    },
    { type: "digital", id: "digital", title: "Email", subtitle: "Instant", subtotal: 0, tax: 0, total: 0 }
  ],
  totals: [
    { type: "items_base_amount", display_text: "Items", amount: 5000 },
    { type: "items_discount", display_text: "Discount", amount: 500 },
    { type: "subtotal", display_text: "Subtotal", amount: 4500 },
    { type: "fulfillment", display_text: "Shipping", amount: 500 },
    { type: "tax", display_text: "Tax", amount: 383 },
    { type: "total", display_text: "Total", amount: 5383 }
  ],
  messages: [
    { type: "info", param: "$.line_items[0]", content_type: "plain", content: "Ships soon — ünïcödé ✓" },
    { type: "error", code: "missing", param: "$.buyer", content_type: "markdown", content: "**Need** \"quotes\"" }
  ],
  links: [{ type: "terms_of_use", url: "https://merchant.example/terms" }],
  buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", phone_number: "+1 555 0100" },
  capabilities: {
    payment: {
      handlers: [
        {
          id: "card",
          name: "Card",
          version: "1",
          spec: "https://psp.example/spec",
          requires_delegate_payment: true,
          requires_pci_compliance: false,
          psp: "psp.example",
          config_schema: "https://psp.example/config.json",
          instrument_schemas: ["https://psp.example/card.json"],
          config: { merchant: "m_1", nested: { list: [1, 2, null], flag: true } }
        }
      ]
    },
    interventions: { supported: ["3ds"], required: [] },
    extensions: [{ name: "discount", extends: ["checkout_session"], spec: "https://acp.example/discount" }]
  },
  fulfillment_address: {
    name: "Ada Lovelace",
    line_one: "1 Main Street",
    line_two: "Apt 2",
    city: "Springfield",
    state: "IL",
    country: "US",
    postal_code: "62701"
  },
  fulfillment_option_id: "ship_standard",
  created_at: "2026-01-30T12:00:00.000Z",
  updated_at: "2026-01-30T12:00:00.000Z",
  expires_at: FAR_FUTURE,
  items: [{ id: "prod_tshirt", quantity: 2 }],
  ...overrides
})

class Boom {
  readonly _tag = "Boom"
}

const levelsOf = (productIds: ReadonlyArray<string>, now: number) =>
  Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(now)).pipe(
    Effect.map((levels) => levels.filter((level) => productIds.includes(level.productId)))
  )

export interface ContractOptions {
  /** The store has several connections with real row locks (PostgreSQL, not PGlite). */
  readonly multiConnection: boolean
  readonly timeout?: number
}

export const checkoutStoreContract = <E>(
  name: string,
  storeLayer: Layer.Layer<CheckoutStore | OrderStore | IdempotencyStore, E>,
  options: ContractOptions
) =>
  layer(storeLayer, { timeout: options.timeout ?? 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("insert, get and update round-trip a full session", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(session))

        const updated = makeSession(session.id, {
          status: "not_ready_for_payment",
          updated_at: "2026-01-30T12:05:00.000Z",
          expires_at: "2099-06-01T00:00:00.000Z",
          items: [{ id: "prod_mug", quantity: 7 }],
          order: { id: "ord_1", checkout_session_id: session.id, permalink_url: "https://m.example/o/1" }
        })
        const { buyer: _buyer, ...withoutBuyer } = updated
        yield* store.sessions.update(withoutBuyer)
        const read = yield* store.sessions.get(session.id)
        expect(read).toEqual(Option.some(withoutBuyer))
        expect(Option.getOrThrow(read)).not.toHaveProperty("buyer")

        expect(yield* store.sessions.get(uid("cs_missing"))).toEqual(Option.none())
      }))

    it.effect("sessions.getJson reads the wire form of the stored session as JSON text, as it is now", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"), {
          buyer: { first_name: "Zoë", last_name: "\"Quote\"", email: "z@example.com" }
        })
        yield* store.sessions.insert(session)
        const read = Option.getOrThrow(yield* store.sessions.getJson(session.id))
        expect(read.status).toBe("ready_for_payment")
        expect(read.expires_at).toBe(session.expires_at)
        expect(JSON.parse(read.json)).toEqual(toCheckoutSession(session))
        expect(JSON.parse(read.json)).not.toHaveProperty("items")

        const completed = makeSession(session.id, {
          status: "completed",
          expires_at: "2099-06-01T00:00:00.000Z",
          order: { id: "ord_1", checkout_session_id: session.id, permalink_url: "https://m.example/o/1" }
        })
        yield* store.sessions.update(completed)
        const after = Option.getOrThrow(yield* store.sessions.getJson(session.id))
        expect(after.status).toBe("completed")
        expect(after.expires_at).toBe("2099-06-01T00:00:00.000Z")
        const wire = JSON.parse(after.json)
        expect(wire).toEqual(toCheckoutSession(completed))
        expect(wire).not.toHaveProperty("order")
        expect(wire).not.toHaveProperty("items")

        expect(yield* store.sessions.getJson(uid("cs_missing"))).toEqual(Option.none())
      }))

    it.effect("returned and given values are copies", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        const given = structuredClone(session) as unknown as { items: Array<{ quantity: number }> }
        yield* store.sessions.insert(given as unknown as Session)
        given.items[0]!.quantity = 99
        const read = Option.getOrThrow(yield* store.sessions.get(session.id)) as unknown as {
          items: Array<{ quantity: number }>
        }
        expect(read.items[0]!.quantity).toBe(2)
        read.items[0]!.quantity = 42
        expect(Option.getOrThrow(yield* store.sessions.get(session.id)).items[0]!.quantity).toBe(2)
      }))

    it.effect("duplicate session ids and updates of missing sessions fail with StorageError", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        const duplicate = yield* Effect.flip(store.sessions.insert(session))
        expect(duplicate).toBeInstanceOf(StorageError)
        expect(duplicate.reason).toBe("failure")
        const missing = yield* Effect.flip(store.sessions.update(makeSession(uid("cs_missing"))))
        expect(missing).toBeInstanceOf(StorageError)
        expect(missing.reason).toBe("failure")
      }))

    it.effect("sessions.lock returns None for a missing id and the session with its version otherwise", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        expect(yield* store.transaction(store.sessions.lock(uid("cs_missing")))).toEqual(Option.none())
        expect(yield* store.transaction(store.sessions.lock(session.id))).toEqual(Option.some({ session, version: 1 }))
      }))

    it.effect("a failed transaction leaves no trace", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const product = uid("prod")
        const session = makeSession(uid("cs"))
        yield* store.inventory.seedStock([{ id: product, stock: 5 }])

        const error = yield* Effect.flip(store.transaction(Effect.gen(function*() {
          yield* store.sessions.insert(session)
          yield* store.inventory.setReservations(session.id, new Map([[product, 2]]), Date.parse(FAR_FUTURE))
          yield* store.inventory.consumeReservations(session.id)
          expect(yield* levelsOf([product], Date.now())).toEqual([{ productId: product, onHand: 3, reserved: 0 }])
          yield* store.inventory.setReservations(session.id, new Map([[product, 1]]), Date.parse(FAR_FUTURE))
          return yield* Effect.fail(new Boom())
        })))
        expect(error).toBeInstanceOf(Boom)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.none())
        expect(yield* levelsOf([product], Date.now())).toEqual([{ productId: product, onHand: 5, reserved: 0 }])

        // An interrupted transaction is rolled back too.
        const exit = yield* Effect.exit(store.transaction(
          Effect.zipRight(store.sessions.insert(session), Effect.interrupt)
        ))
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.none())

        // A defect as well.
        const defect = yield* Effect.exit(store.transaction(
          Effect.zipRight(store.sessions.insert(session), Effect.die("bug"))
        ))
        expect(Exit.isFailure(defect)).toBe(true)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.none())
      }))

    it.effect("nested transactions join the outer one; an inner failure undoes only its writes", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [a, b, c] = [makeSession(uid("cs")), makeSession(uid("cs")), makeSession(uid("cs"))]

        const seen = yield* store.transaction(Effect.gen(function*() {
          yield* store.sessions.insert(a)
          const inner = yield* store.transaction(Effect.gen(function*() {
            yield* store.sessions.insert(b)
            return Option.map(yield* store.sessions.lock(a.id), (locked) => locked.session)
          }))
          const failed = yield* Effect.flip(store.transaction(
            Effect.zipRight(store.sessions.insert(c), Effect.fail(new Boom()))
          ))
          expect(failed).toBeInstanceOf(Boom)
          expect(yield* store.sessions.get(c.id)).toEqual(Option.none())
          expect(yield* store.sessions.get(b.id)).toEqual(Option.some(b))
          return inner
        }))
        expect(seen).toEqual(Option.some(a))
        expect(yield* store.sessions.get(a.id)).toEqual(Option.some(a))
        expect(yield* store.sessions.get(b.id)).toEqual(Option.some(b))
        expect(yield* store.sessions.get(c.id)).toEqual(Option.none())

        // The outer failure undoes the inner, committed-to-the-outer, writes.
        const [d, e] = [makeSession(uid("cs")), makeSession(uid("cs"))]
        yield* Effect.flip(store.transaction(Effect.gen(function*() {
          yield* store.sessions.insert(d)
          yield* store.transaction(store.sessions.insert(e))
          return yield* Effect.fail(new Boom())
        })))
        expect(yield* store.sessions.get(d.id)).toEqual(Option.none())
        expect(yield* store.sessions.get(e.id)).toEqual(Option.none())
      }))

    it.effect("lockStock: others' live reservations count, own and expired ones do not", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2, unknown] = [uid("prod_a"), uid("prod_b"), uid("prod_unknown")]
        const [own, other, expired, boundary] = [uid("cs"), uid("cs"), uid("cs"), uid("cs")]
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 5 }])
        yield* store.inventory.setReservations(own, new Map([[p1, 3]]), now + 60_000)
        yield* store.inventory.setReservations(other, new Map([[p1, 2], [p2, 1]]), now + 60_000)
        yield* store.inventory.setReservations(expired, new Map([[p1, 4]]), now - 1)
        yield* store.inventory.setReservations(boundary, new Map([[p2, 2]]), now) // expires exactly now: not live

        const available = yield* store.transaction(store.inventory.lockStock([p2, p1, unknown, p1], now, own))
        expect(available).toEqual(new Map([[p1, 8], [p2, 4]]))
        expect(available.has(unknown)).toBe(false)

        // Seen from another session, `own` holds 3 of p1.
        expect(yield* store.transaction(store.inventory.lockStock([p1], now, other))).toEqual(new Map([[p1, 7]]))
        expect(yield* store.inventory.lockStock([], now, own)).toEqual(new Map())
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 10, reserved: 5 },
          { productId: p2, onHand: 5, reserved: 1 }
        ].sort((x, y) => (x.productId < y.productId ? -1 : 1)))
      }))

    it.effect("createSessionReservingStock: writes the session and its reservations only when every one fits", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2, unknown] = [uid("prod_a"), uid("prod_b"), uid("prod_unknown")]
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 5 }])
        yield* store.inventory.setReservations(uid("cs"), new Map([[p1, 6]]), now + 60_000) // live: counts
        yield* store.inventory.setReservations(uid("cs"), new Map([[p2, 4]]), now - 1) // expired: does not
        const until = now + 3_600_000
        const sessionOf = (reservations: ReadonlyMap<string, number>) => ({
          session: makeSession(uid("cs"), { expires_at: iso(until) }),
          reservations
        })

        // p1: 4 available, p2: 5.
        const fits = sessionOf(new Map([[p2, 5], [p1, 4]]))
        expect(yield* store.createSessionReservingStock(fits, now)).toBe(true)
        expect(yield* store.sessions.get(fits.session.id)).toEqual(Option.some(fits.session))
        expect(yield* store.transaction(store.inventory.lockStock([p1, p2], now, uid("cs")))).toEqual(
          new Map([[p1, 0], [p2, 0]])
        )
        // Its reservations count until the session's `expires_at`.
        expect(yield* store.transaction(store.inventory.lockStock([p1], until, uid("cs")))).toEqual(new Map([[p1, 10]]))

        // Nothing left, or a product without stock: refused, nothing is written.
        const refused = sessionOf(new Map([[p1, 1], [unknown, 1]]))
        expect(yield* store.createSessionReservingStock(refused, now)).toBe(false)
        const unknownOnly = sessionOf(new Map([[unknown, 1]]))
        expect(yield* store.createSessionReservingStock(unknownOnly, now)).toBe(false)
        expect(yield* store.sessions.get(refused.session.id)).toEqual(Option.none())
        expect(yield* store.sessions.get(unknownOnly.session.id)).toEqual(Option.none())
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 10, reserved: 10 },
          { productId: p2, onHand: 5, reserved: 5 }
        ].sort((x, y) => (x.productId < y.productId ? -1 : 1)))

        // No reservations: the session alone. A duplicate id fails and changes nothing.
        expect(yield* store.createSessionReservingStock(sessionOf(new Map()), now)).toBe(true)
        const duplicate = yield* Effect.flip(
          store.createSessionReservingStock({ session: fits.session, reservations: new Map([[p2, 0]]) }, now)
        )
        expect(duplicate).toBeInstanceOf(StorageError)
      }))

    it.effect("createSessionReservingStock with an answer: both in one step; a lost claim or a refusal stores neither", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const keys = yield* IdempotencyStore
        const p1 = uid("prod_a")
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1, stock: 5 }])
        const sessionOf = (quantity: number) => ({
          session: makeSession(uid("cs"), { expires_at: iso(now + 3_600_000) }),
          reservations: new Map([[p1, quantity]])
        })
        const { answerOf, completed, scope } = yield* claimedKey(now)

        // The claim is another request's now: the step fails and writes nothing.
        const lost = sessionOf(2)
        expect(yield* Effect.flip(store.createSessionReservingStock(lost, now, answerOf("claim_b")))).toBe(claimLost)
        expect(yield* store.sessions.get(lost.session.id)).toEqual(Option.none())
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 5, reserved: 0 }])
        // Refused (does not fit): nothing written, the answer not stored.
        expect(yield* store.createSessionReservingStock(sessionOf(6), now, answerOf("claim_a"))).toBe(false)
        expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))
        // Written: the session, its reservation and the answer.
        const written = sessionOf(2)
        expect(yield* store.createSessionReservingStock(written, now, answerOf("claim_a"))).toBe(true)
        expect(yield* store.sessions.get(written.session.id)).toEqual(Option.some(written.session))
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 5, reserved: 2 }])
        expect(yield* keys.find(scope, now)).toEqual(Option.some(completed))
      }))

    it.effect("updateSessionKeepingItems with an answer: both in one step; a lost claim or a stale version stores neither", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const keys = yield* IdempotencyStore
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        const { answerOf, completed, scope } = yield* claimedKey(now)
        const changed = { ...session, updated_at: "2026-01-30T12:01:00.000Z" }

        expect(yield* Effect.flip(store.updateSessionKeepingItems(changed, 1, answerOf("claim_b")))).toBe(claimLost)
        expect(yield* store.sessions.getVersioned(session.id)).toEqual(Option.some({ session, version: 1 }))
        expect(yield* store.updateSessionKeepingItems(changed, 2, answerOf("claim_a"))).toBe(false)
        expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))
        expect(yield* store.updateSessionKeepingItems(changed, 1, answerOf("claim_a"))).toBe(true)
        expect(yield* store.sessions.getVersioned(session.id)).toEqual(Option.some({ session: changed, version: 2 }))
        expect(yield* keys.find(scope, now)).toEqual(Option.some(completed))
      }))

    it.effect("updateSessionKeepingItems: at the version read, the session and its reservations' expiry; else nothing", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const p1 = uid("prod_a")
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
        expect(yield* store.sessions.getVersioned(uid("cs_missing"))).toEqual(Option.none())
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
        const v1 = Option.getOrThrow(yield* store.sessions.getVersioned(session.id))
        expect(v1).toEqual({ session, version: 1 })
        const written: Array<number> = [v1.version]
        const later = now + 3_600_000
        const first = { ...session, updated_at: "2026-01-30T12:01:00.000Z", expires_at: iso(later) }
        expect(yield* store.updateSessionKeepingItems(first, v1.version)).toBe(true)
        const v2 = Option.getOrThrow(yield* store.sessions.getVersioned(session.id))
        expect(v2.session).toEqual(first)
        written.push(v2.version)
        // Still 3 held after the old expiry, until the session's new one; the counters did not move.
        const other = uid("cs")
        expect(yield* store.transaction(store.inventory.lockStock([p1], now + 120_000, other))).toEqual(
          new Map([[p1, 7]])
        )
        expect(yield* store.transaction(store.inventory.lockStock([p1], later, other))).toEqual(new Map([[p1, 10]]))
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])

        // Read at v1, written since: nothing written.
        const stale = { ...session, status: "canceled" as const, expires_at: iso(now) }
        expect(yield* store.updateSessionKeepingItems(stale, v1.version)).toBe(false)
        expect(Option.getOrThrow(yield* store.sessions.getVersioned(session.id))).toEqual(v2)
        expect(yield* store.transaction(store.inventory.lockStock([p1], now + 120_000, other))).toEqual(
          new Map([[p1, 7]])
        )

        // Every other kind of write moves the version too, and answers it.
        written.push(yield* store.sessions.update({ ...first, status: "ready_for_payment" }))
        written.push(yield* store.startPaymentAttempt(first, attemptOf(session.id, 1)))
        yield* store.updateSessionAndReservations({ session: first, reservations: new Map([[p1, 2]]) })
        written.push(Option.getOrThrow(yield* store.sessions.getVersioned(session.id)).version)
        expect(Option.getOrThrow(yield* store.transaction(store.sessions.lock(session.id))).version).toBe(
          written.at(-1)
        )
        expect(new Set(written).size).toBe(written.length)
        expect(written).toEqual([...written].sort((a, b) => a - b))
        expect(yield* store.updateSessionKeepingItems(stale, v2.version)).toBe(false)
        // A session without reservations; a missing session is not written.
        const bare = makeSession(uid("cs"))
        yield* store.sessions.insert(bare)
        expect(yield* store.updateSessionKeepingItems(bare, 1)).toBe(true)
        expect(yield* store.updateSessionKeepingItems(makeSession(uid("cs")), 1)).toBe(false)
      }))

    it.effect("updateSessionAndReservations: the session, and its reservations replaced or released", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2] = [uid("prod_a"), uid("prod_b")].sort() as [string, string]
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 10 }])
        const session = makeSession(uid("cs"), { expires_at: iso(now + 60_000) })
        yield* store.sessions.insert(session)
        yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
        const changed = { ...session, expires_at: iso(now + 120_000) }
        yield* store.updateSessionAndReservations({ session: changed, reservations: new Map([[p2, 4]]) })
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(changed))
        expect(yield* levelsOf([p1, p2], now + 90_000)).toEqual([
          { productId: p1, onHand: 10, reserved: 0 },
          { productId: p2, onHand: 10, reserved: 4 }
        ])
        const canceled = { ...changed, status: "canceled" as const }
        yield* store.updateSessionAndReservations({ session: canceled, reservations: new Map() })
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(canceled))
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 10, reserved: 0 },
          { productId: p2, onHand: 10, reserved: 0 }
        ])
        const missing = yield* Effect.flip(
          store.updateSessionAndReservations({ session: makeSession(uid("cs")), reservations: new Map() })
        )
        expect(missing).toBeInstanceOf(StorageError)
      }))

    it.effect("setReservations replaces the session's reservations", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2] = [uid("prod_a"), uid("prod_b")]
        const session = uid("cs")
        const now = Date.now()
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 10 }])
        yield* store.inventory.setReservations(session, new Map([[p1, 2], [p2, 1]]), now + 60_000)
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 10, reserved: 2 },
          { productId: p2, onHand: 10, reserved: 1 }
        ])
        yield* store.inventory.setReservations(session, new Map([[p2, 3]]), now + 60_000)
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 10, reserved: 0 },
          { productId: p2, onHand: 10, reserved: 3 }
        ])
        // The new expiry applies: at now + 2 min they no longer count.
        yield* store.inventory.setReservations(session, new Map([[p2, 4]]), now + 60_000)
        expect(yield* levelsOf([p2], now + 120_000)).toEqual([{ productId: p2, onHand: 10, reserved: 0 }])
        yield* store.inventory.setReservations(session, new Map(), now + 60_000)
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 10, reserved: 0 },
          { productId: p2, onHand: 10, reserved: 0 }
        ])
      }))

    it.effect("consumeReservations lowers on hand and removes them", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2] = [uid("prod_a"), uid("prod_b")]
        const [session, other] = [uid("cs"), uid("cs")]
        const now = Date.now()
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }, { id: p2, stock: 3 }])
        yield* store.inventory.setReservations(session, new Map([[p1, 4], [p2, 3]]), now + 60_000)
        yield* store.inventory.setReservations(other, new Map([[p1, 1]]), now + 60_000)
        yield* store.transaction(store.inventory.consumeReservations(session))
        expect(yield* levelsOf([p1, p2], now)).toEqual([
          { productId: p1, onHand: 6, reserved: 1 },
          { productId: p2, onHand: 0, reserved: 0 }
        ])
        expect(yield* store.inventory.lockStock([p1, p2], now, other)).toEqual(new Map([[p1, 6], [p2, 0]]))
        // Nothing left to consume.
        yield* store.inventory.consumeReservations(session)
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 6, reserved: 1 }])
      }))

    it.effect("releaseReservations returns the units", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const p1 = uid("prod")
        const session = uid("cs")
        const now = Date.now()
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
        yield* store.inventory.setReservations(session, new Map([[p1, 4]]), now + 60_000)
        expect(yield* store.inventory.lockStock([p1], now, uid("cs"))).toEqual(new Map([[p1, 6]]))
        yield* store.inventory.releaseReservations(session)
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 0 }])
        expect(yield* store.inventory.lockStock([p1], now, uid("cs"))).toEqual(new Map([[p1, 10]]))
        yield* store.inventory.releaseReservations(session)
      }))

    it.effect("seedStock keeps the stock already stored", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const [p1, p2] = [uid("prod_a"), uid("prod_b")]
        yield* store.inventory.seedStock([{ id: p1, stock: 5 }])
        yield* store.inventory.seedStock([{ id: p1, stock: 100 }, { id: p2, stock: 7 }])
        yield* store.inventory.seedStock([])
        expect(yield* levelsOf([p1, p2], Date.now())).toEqual([
          { productId: p1, onHand: 5, reserved: 0 },
          { productId: p2, onHand: 7, reserved: 0 }
        ])
      }))

    it.effect("a duplicate session id fails; inside a transaction the failure is caught and the rest commits", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        const duplicate = yield* Effect.flip(store.sessions.insert({ ...session, status: "canceled" }))
        expect(duplicate).toBeInstanceOf(StorageError)
        expect(duplicate.reason).toBe("failure")
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(session))

        // Inside a transaction the failure can be caught and the transaction goes on (savepoint).
        const other = makeSession(uid("cs"))
        yield* store.transaction(Effect.gen(function*() {
          yield* store.sessions.insert(other)
          const failed = yield* Effect.flip(store.transaction(store.sessions.insert(session)))
          expect(failed).toBeInstanceOf(StorageError)
        }))
        expect(yield* store.sessions.get(other.id)).toEqual(Option.some(other))
      }))

    it.effect("lockExpiredSessions: sessions of the given statuses past their expiry, oldest first, limited", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        // Far in the past, so that no other case's session is concerned.
        const at = (seconds: number) => new Date(Date.parse("2001-01-01T00:00:00.000Z") + seconds * 1000).toISOString()
        const first = makeSession(uid("cs"), { status: "not_ready_for_payment", expires_at: at(1) })
        const second = makeSession(uid("cs"), { status: "authentication_required", expires_at: at(2) })
        const third = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(3) })
        const completed = makeSession(uid("cs"), { status: "completed", expires_at: at(0) })
        const canceled = makeSession(uid("cs"), { status: "canceled", expires_at: at(0) })
        const later = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(100) })
        for (const session of [later, third, completed, first, canceled, second]) yield* store.sessions.insert(session)

        const now = Date.parse(at(3))
        expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).toEqual([first.id, second.id, third.id])
        expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 2)).toEqual([first.id, second.id])
        expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, Date.parse(at(1)) - 1, 10)).toEqual([])
        expect(yield* store.transaction(store.lockExpiredSessions(ACTIVE_STATUSES, now, 1))).toEqual([first.id])

        yield* store.sessions.update({ ...first, status: "expired" })
        expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).toEqual([second.id, third.id])
      }))

    it.effect("sessions.list: newest first, of one status when asked, limited; each as get reads it", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        // Created (and inserted) after every other case's session, so that these come first.
        const at = (seconds: number) => new Date(Date.parse("2900-01-01T00:00:00.000Z") + seconds * 1000).toISOString()
        const first = makeSession(uid("cs"), { status: "canceled", created_at: at(1) })
        const second = makeSession(uid("cs"), { status: "ready_for_payment", created_at: at(2) })
        const third = makeSession(uid("cs"), { status: "canceled", created_at: at(3) })
        for (const session of [first, second, third]) yield* store.sessions.insert(session)

        expect(yield* store.sessions.list({ limit: 3 })).toEqual([third, second, first])
        expect(yield* store.sessions.list({ limit: 2 })).toEqual([third, second])
        expect(yield* store.sessions.list({ status: "canceled", limit: 2 })).toEqual([third, first])
        expect(yield* store.sessions.list({ status: "canceled", limit: 1 })).toEqual([third])
        expect(yield* store.sessions.list({ limit: 0 })).toEqual([])

        // A write keeps the session's place and moves it to the status it now has.
        const completed = makeSession(first.id, {
          status: "completed",
          created_at: first.created_at,
          updated_at: at(10),
          order: { id: uid("ord"), checkout_session_id: first.id, permalink_url: "https://m.example/o/1" }
        })
        yield* store.sessions.update(completed)
        const listed = yield* store.sessions.list({ limit: 3 })
        expect(listed).toEqual([third, second, completed])
        expect(yield* store.sessions.list({ status: "completed", limit: 1 })).toEqual([completed])
        expect(yield* store.sessions.list({ status: "canceled", limit: 1 })).toEqual([third])
        for (const session of listed) {
          expect(Option.some(session)).toEqual(yield* store.sessions.get(session.id))
        }
      }))

    it.effect("payment attempts: latest by sequence, outcome updates; a missing one cannot be updated", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.none())
        const first = attemptOf(session.id, 1)
        yield* store.startPaymentAttempt(session, first)
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(first))
        const declined = { ...first, state: "declined" as const, updatedAt: 2_000 }
        yield* store.paymentAttempts.update(declined)
        const second = attemptOf(session.id, 2)
        yield* store.startPaymentAttempt(session, second)
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(second))
        const succeeded = { ...second, state: "succeeded" as const, chargeId: "ch_1", updatedAt: 4_000 }
        yield* store.paymentAttempts.update(succeeded)
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(succeeded))
        const missing = yield* Effect.flip(store.paymentAttempts.update({ ...first, sequence: 9 }))
        expect(missing).toBeInstanceOf(StorageError)
      }))

    it.effect("lockSessionForPayment: the session with its version, latest attempt and coupon holds", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        expect(yield* store.transaction(store.lockSessionForPayment(uid("cs_missing")))).toEqual(Option.none())
        expect(yield* store.transaction(store.lockSessionForPayment(session.id))).toEqual(
          Option.some({ session, version: 1, latestAttempt: Option.none(), couponHolds: [] })
        )
        yield* store.startPaymentAttempt(session, attemptOf(session.id, 1))
        const second = { ...attemptOf(session.id, 2), amount: 2 ** 40 }
        const version = yield* store.startPaymentAttempt(session, second)
        const [couponA, couponB] = [uid("coupon_b"), uid("coupon_a")].sort()
        yield* store.coupons.seed([{ id: couponB!, timesRedeemed: 0 }, { id: couponA!, timesRedeemed: 3 }])
        yield* store.coupons.hold(session.id, [couponB!, couponA!], Date.parse(FAR_FUTURE))
        expect(yield* store.transaction(store.lockSessionForPayment(session.id))).toEqual(
          Option.some({ session, version, latestAttempt: Option.some(second), couponHolds: [couponA, couponB] })
        )
      }))

    it.effect("startPaymentAttempt writes the session and the attempt together, or neither", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        const paying = {
          ...session,
          status: "authentication_required" as const,
          updated_at: "2026-01-01T00:01:00.000Z"
        }
        const attempt = attemptOf(session.id, 1)
        yield* store.startPaymentAttempt(paying, attempt)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(paying))
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attempt))

        // A duplicate attempt, a session that does not exist: a StorageError and nothing written.
        const canceled = { ...paying, status: "canceled" as const }
        const duplicate = yield* Effect.flip(store.startPaymentAttempt(canceled, attempt))
        expect(duplicate).toBeInstanceOf(StorageError)
        const orphan = attemptOf(uid("cs_missing"), 1)
        const noSession = yield* Effect.flip(
          store.startPaymentAttempt(makeSession(orphan.sessionId), orphan)
        )
        expect(noSession).toBeInstanceOf(StorageError)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(paying))
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attempt))
        // Nothing was stored for the missing session: created now, it has no attempt.
        yield* store.sessions.insert(makeSession(orphan.sessionId))
        expect(yield* latestAttemptOf(orphan.sessionId)).toEqual(Option.none())
      }))

    it.effect("readSessionForPayment answers what lockSessionForPayment does, without a transaction", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        expect(yield* store.readSessionForPayment(uid("cs_missing"))).toEqual(Option.none())
        expect(yield* store.readSessionForPayment(session.id)).toEqual(
          Option.some({ session, version: 1, latestAttempt: Option.none(), couponHolds: [] })
        )
        const attempt = attemptOf(session.id, 1)
        const version = yield* store.startPaymentAttempt(session, attempt)
        const [coupon] = [uid("coupon")]
        yield* store.coupons.seed([{ id: coupon!, timesRedeemed: 0 }])
        yield* store.coupons.hold(session.id, [coupon!], Date.parse(FAR_FUTURE))
        const read = yield* store.readSessionForPayment(session.id)
        expect(read).toEqual(
          Option.some({ session, version, latestAttempt: Option.some(attempt), couponHolds: [coupon] })
        )
        expect(read).toEqual(yield* store.transaction(store.lockSessionForPayment(session.id)))
      }))

    it.effect("startPaymentAttemptAt writes the session and the attempt at the version read, else nothing", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        const paying = { ...session, updated_at: "2026-01-01T00:01:00.000Z" }
        const attempt = attemptOf(session.id, 1)
        // Read at version 1, written since: nothing is written, neither the session nor the attempt.
        const moved = yield* store.sessions.update({ ...session, status: "ready_for_payment" })
        expect(yield* store.startPaymentAttemptAt(paying, attempt, 1)).toEqual(Option.none())
        const unchanged = Option.getOrThrow(yield* store.sessions.getVersioned(session.id))
        expect(unchanged).toEqual({ session: { ...session, status: "ready_for_payment" }, version: moved })
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.none())
        // At the version it is at: both, and the new version.
        const written = Option.getOrThrow(yield* store.startPaymentAttemptAt(paying, attempt, moved))
        expect(yield* store.sessions.getVersioned(session.id)).toEqual(
          Option.some({ session: paying, version: written })
        )
        expect(written).toBeGreaterThan(moved)
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attempt))
        // A duplicate attempt fails and writes nothing; an absent session is none.
        const again = { ...paying, status: "canceled" as const }
        expect(yield* Effect.flip(store.startPaymentAttemptAt(again, attempt, written))).toBeInstanceOf(StorageError)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(paying))
        const orphan = attemptOf(uid("cs_missing"), 1)
        expect(yield* store.startPaymentAttemptAt(makeSession(orphan.sessionId), orphan, 1)).toEqual(Option.none())
      }))

    it.effect("completePaidCheckout: everything in one step at the version paid, nothing otherwise", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const orders = yield* OrderStore
        const p1 = uid("prod_a")
        const [kept, redeemed] = [uid("coupon_k"), uid("coupon_r")]
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
        yield* store.coupons.seed([{ id: kept, timesRedeemed: 0 }, { id: redeemed, timesRedeemed: 4 }])
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
        yield* store.coupons.hold(session.id, [redeemed], now + 60_000)
        const paying = { ...session, updated_at: "2026-01-30T12:00:01.000Z" }
        const version = yield* store.startPaymentAttempt(paying, attemptOf(session.id, 1))
        expect(Option.getOrThrow(yield* store.sessions.getVersioned(session.id)).version).toBe(version)

        const order = makeOrder({
          id: uid("ord"),
          checkoutSessionId: session.id,
          permalinkUrl: "https://merchant.example/orders/1",
          lineItems: session.line_items.map((line) => ({ ...line, title: "T-shirt", kind: "physical" as const })),
          totals: session.totals
        })
        const completed = { ...paying, status: "completed" as const, updated_at: "2026-01-30T12:00:02.000Z" }
        const completion = (overrides: Partial<PaidCompletion> = {}): PaidCompletion => ({
          session: completed,
          version,
          attemptSequence: 1,
          chargeId: "ch_paid",
          now: now + 2_000,
          order: {
            stored: { order, sessionId: session.id, createdAt: now + 2_000 },
            event: { id: uid("evt"), payload: makeOrderEvent("order_create", order), now: now + 2_000 }
          },
          ...overrides
        })
        const unchanged = Effect.gen(function*() {
          expect(yield* store.sessions.getVersioned(session.id)).toEqual(Option.some({ session: paying, version }))
          expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attemptOf(session.id, 1)))
          expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])
          const redemptions = yield* store.coupons.redemptions
          expect([redemptions.get(kept), redemptions.get(redeemed)]).toEqual([0, 4])
          expect(yield* orders.getOrder(order.id)).toEqual(Option.none())
        })

        // Not at the version paid, another attempt, another session: false and nothing written.
        expect(yield* store.completePaidCheckout(completion({ version: version - 1 }))).toBe(false)
        expect(yield* store.completePaidCheckout(completion({ attemptSequence: 2 }))).toBe(false)
        expect(
          yield* store.completePaidCheckout(completion({ session: { ...completed, id: uid("cs_missing") } }))
        ).toBe(false)
        yield* unchanged

        expect(yield* store.completePaidCheckout(completion())).toBe(true)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(completed))
        expect(Option.getOrThrow(yield* store.sessions.getVersioned(session.id)).version).toBeGreaterThan(version)
        expect(yield* latestAttemptOf(session.id)).toEqual(
          Option.some({ ...attemptOf(session.id, 1), state: "succeeded", chargeId: "ch_paid", updatedAt: now + 2_000 })
        )
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 7, reserved: 0 }])
        const redemptions = yield* store.coupons.redemptions
        expect([redemptions.get(kept), redemptions.get(redeemed)]).toEqual([0, 5])
        expect(Option.getOrThrow(yield* store.transaction(store.lockSessionForPayment(session.id))).couponHolds)
          .toEqual([])
        expect(yield* orders.getOrder(order.id)).toEqual(
          Option.some({ order, sessionId: session.id, createdAt: now + 2_000 })
        )
        const events = yield* orders.listEvents({ orderId: order.id, limit: 10 })
        expect(events.map((event) => [event.type, event.sequence, event.state])).toEqual([[
          "order_create",
          1,
          "pending"
        ]])
        expect(events[0]!.payload).toEqual(makeOrderEvent("order_create", order))

        // The same completion again (a concurrent twin): the version moved on, nothing doubled.
        expect(yield* store.completePaidCheckout(completion())).toBe(false)
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 7, reserved: 0 }])
        expect((yield* store.coupons.redemptions).get(redeemed)).toBe(5)
        expect(yield* orders.listEvents({ orderId: order.id, limit: 10 })).toHaveLength(1)
      }))

    /**
     * A session of 3 units of a product of 10 whose first attempt is pending at `version`, its
     * order, and the completion that pays it (`completion(overrides)`), completed at `now`.
     */
    const pendingCompletion = (now: number) =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const p1 = uid("prod_a")
        yield* store.inventory.seedStock([{ id: p1, stock: 10 }])
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        yield* store.inventory.setReservations(session.id, new Map([[p1, 3]]), now + 60_000)
        const version = yield* store.startPaymentAttempt(session, attemptOf(session.id, 1))
        const order = makeOrder({
          id: uid("ord"),
          checkoutSessionId: session.id,
          permalinkUrl: "https://merchant.example/orders/1",
          lineItems: session.line_items.map((line) => ({ ...line, title: "T-shirt", kind: "physical" as const })),
          totals: session.totals
        })
        const completed = { ...session, status: "completed" as const, updated_at: "2026-01-30T12:00:02.000Z" }
        const completion = (overrides: Partial<PaidCompletion> = {}): PaidCompletion => ({
          session: completed,
          version,
          attemptSequence: 1,
          chargeId: "ch_paid",
          now,
          order: {
            stored: { order, sessionId: session.id, createdAt: now },
            event: { id: uid("evt"), payload: makeOrderEvent("order_create", order), now }
          },
          ...overrides
        })
        return { p1, session, version, order, completed, completion }
      })

    it.effect("completePaidCheckout with an answer: both in one step; a lost claim or a stale version stores neither", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const orders = yield* OrderStore
        const keys = yield* IdempotencyStore
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        const { completed, completion, order, p1, session, version } = yield* pendingCompletion(now)
        const { answerOf, completed: answered, scope } = yield* claimedKey(now)
        const nothingWritten = Effect.gen(function*() {
          expect(yield* store.sessions.getVersioned(session.id)).toEqual(Option.some({ session, version }))
          expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attemptOf(session.id, 1)))
          expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])
          expect(yield* orders.getOrder(order.id)).toEqual(Option.none())
          expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))
        })

        // The claim is another request's now: the step fails and writes nothing.
        expect(yield* Effect.flip(store.completePaidCheckout(completion(), answerOf("claim_b")))).toBe(claimLost)
        yield* nothingWritten
        // Not at the version paid: nothing written, the answer not stored.
        expect(yield* store.completePaidCheckout(completion({ version: version - 1 }), answerOf("claim_a"))).toBe(false)
        yield* nothingWritten
        // Written: the completion and the answer.
        expect(yield* store.completePaidCheckout(completion(), answerOf("claim_a"))).toBe(true)
        expect(yield* store.sessions.get(session.id)).toEqual(Option.some(completed))
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 7, reserved: 0 }])
        expect(Option.isSome(yield* orders.getOrder(order.id))).toBe(true)
        expect(yield* keys.find(scope, now)).toEqual(Option.some(answered))
      }))

    it.effect("a completion rolled back after its order was written leaves no order, no event, nothing consumed", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const orders = yield* OrderStore
        const now = Date.parse("2026-01-30T12:00:00.000Z")
        const { completion, order, p1, session, version } = yield* pendingCompletion(now)
        const failed = yield* Effect.flip(store.transaction(Effect.gen(function*() {
          const written = yield* store.completePaidCheckout(completion({ chargeId: "ch_rolled_back" }))
          expect(written).toBe(true)
          expect(Option.isSome(yield* orders.getOrder(order.id))).toBe(true)
          return yield* Effect.fail(new Boom())
        })))
        expect(failed).toBeInstanceOf(Boom)
        expect(yield* orders.getOrder(order.id)).toEqual(Option.none())
        expect(yield* orders.listEvents({ orderId: order.id, limit: 10 })).toEqual([])
        expect(yield* store.sessions.getVersioned(session.id)).toEqual(Option.some({ session, version }))
        expect(yield* latestAttemptOf(session.id)).toEqual(Option.some(attemptOf(session.id, 1)))
        expect(yield* levelsOf([p1], now)).toEqual([{ productId: p1, onHand: 10, reserved: 3 }])
      }))

    it.effect("lockSessionForPayment waits for the lock and then sees what its holder committed", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"))
        yield* store.sessions.insert(session)
        const attempt = attemptOf(session.id, 1)
        const locked = yield* Effect.makeLatch(false)
        const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
          yield* store.lockSessionForPayment(session.id)
          yield* locked.open
          yield* Effect.sleep("100 millis")
          yield* store.startPaymentAttempt(session, attempt)
        })))
        yield* locked.await
        const seen = yield* store.transaction(store.lockSessionForPayment(session.id))
        yield* Fiber.join(holder)
        expect(Option.getOrThrow(seen).latestAttempt).toEqual(Option.some(attempt))
      }))

    it.effect("ping", () => Effect.flatMap(CheckoutStore, (store) => store.ping))

    // -------------------------------------------------------------------------------------------
    // Concurrency (meaningful with several connections; serialized elsewhere, still must hold)

    it.effect("20 concurrent reservations of 1 unit against a stock of 5 → exactly 5", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const product = uid("prod")
        const now = Date.now()
        yield* store.inventory.seedStock([{ id: product, stock: 5 }])
        const results = yield* Effect.forEach(
          Array.from({ length: 20 }, () => uid("cs")),
          (session) =>
            store.transaction(Effect.gen(function*() {
              const available = yield* store.inventory.lockStock([product], now, session)
              if ((available.get(product) ?? 0) < 1) return false
              yield* Effect.yieldNow()
              yield* store.inventory.setReservations(session, new Map([[product, 1]]), now + 60_000)
              return true
            })),
          { concurrency: "unbounded" }
        )
        expect(results.filter((ok) => ok)).toHaveLength(5)
        expect(yield* levelsOf([product], now)).toEqual([{ productId: product, onHand: 5, reserved: 5 }])
      }))

    it.effect("concurrent transactions on one session serialize (no lost update)", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const session = makeSession(uid("cs"), { items: [{ id: "prod_counter", quantity: 1 }] })
        yield* store.sessions.insert(session)
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          () =>
            store.transaction(Effect.gen(function*() {
              const { session: current } = Option.getOrThrow(yield* store.sessions.lock(session.id))
              yield* Effect.sleep("2 millis")
              const item = current.items[0]!
              yield* store.sessions.update({ ...current, items: [{ ...item, quantity: item.quantity + 1 }] })
            })),
          { concurrency: "unbounded" }
        )
        const final = Option.getOrThrow(yield* store.sessions.get(session.id))
        expect(final.items[0]!.quantity).toBe(21)
      }))

    if (options.multiConnection) {
      it.effect("lockExpiredSessions skips sessions locked by another transaction", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const at = (seconds: number) =>
            new Date(Date.parse("2002-01-01T00:00:00.000Z") + seconds * 1000).toISOString()
          const first = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(1) })
          const second = makeSession(uid("cs"), { status: "ready_for_payment", expires_at: at(2) })
          yield* store.sessions.insert(first)
          yield* store.sessions.insert(second)
          const now = Date.parse(at(10))

          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.sessions.lock(first.id)
            yield* locked.open
            yield* release.await
          })))
          yield* locked.await
          // A sweep in another transaction does not wait for the held row and takes the next one.
          const ids = yield* store.transaction(store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).pipe(
            Effect.timeout("5 seconds")
          )
          yield* release.open
          yield* Fiber.join(holder)
          expect(ids.filter((id) => id === first.id || id === second.id)).toEqual([second.id])
          expect(yield* store.lockExpiredSessions(ACTIVE_STATUSES, now, 10)).toEqual(
            expect.arrayContaining([first.id, second.id])
          )
        }))

      it.effect("a second sessions.lock waits for the first transaction to commit", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const session = makeSession(uid("cs"), { items: [{ id: "prod_x", quantity: 1 }] })
          yield* store.sessions.insert(session)
          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          const events = yield* Effect.sync(() => [] as Array<string>)
          const first = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.sessions.lock(session.id)
            yield* locked.open
            yield* release.await
            events.push("first commits")
            yield* store.sessions.update({ ...session, items: [{ id: "prod_x", quantity: 2 }] })
          })))
          yield* locked.await
          const second = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            const { session: read } = Option.getOrThrow(yield* store.sessions.lock(session.id))
            events.push(`second reads ${read.items[0]!.quantity}`)
          })))
          yield* Effect.sleep("100 millis")
          events.push("released")
          yield* release.open
          yield* Fiber.join(first)
          yield* Fiber.join(second)
          expect(events).toEqual(["released", "first commits", "second reads 2"])
        }))

      it.effect("readSessionForPayment does not wait for a lock: it reads what is committed", () =>
        Effect.gen(function*() {
          const store = yield* CheckoutStore
          const session = makeSession(uid("cs"))
          yield* store.sessions.insert(session)
          const locked = yield* Effect.makeLatch(false)
          const release = yield* Effect.makeLatch(false)
          const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.lockSessionForPayment(session.id)
            yield* store.startPaymentAttempt(session, attemptOf(session.id, 1))
            yield* locked.open
            yield* release.await
          })))
          yield* locked.await
          const read = yield* store.readSessionForPayment(session.id)
          yield* release.open
          yield* Fiber.join(holder)
          expect(read).toEqual(Option.some({ session, version: 1, latestAttempt: Option.none(), couponHolds: [] }))
        }))
    }

    it.effect("stockLevels lists every product in id order", () =>
      Effect.gen(function*() {
        const store = yield* CheckoutStore
        const levels = yield* store.inventory.stockLevels(Date.now())
        const ids = Chunk.fromIterable(levels.map((level) => level.productId))
        expect(Chunk.toReadonlyArray(ids)).toEqual([...Chunk.toReadonlyArray(ids)].sort())
      }))
  })
