/**
 * The reserved-units counter (`stock.reserved`, migration 0007) through the checkout service, as
 * the application wires it (every store on one database):
 *
 * - On the SQL stores (embedded PGlite; PostgreSQL when TEST_DATABASE_URL is set): create / update
 *   / complete / cancel / expire, the counter exact and `stockLevels` as summed from the rows after
 *   each step; expired reservations not swept yet do not count.
 * - PostgreSQL only: many concurrent creates, updates, cancels and sweeps on the same products
 *   never oversell nor deadlock.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Either, Layer, TestClock } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import type { CheckoutSessionCreateRequest } from "../../src/checkout/session/schemas.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { SqlVaultStore } from "../../src/delegate-payment/store/sql-vault-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import { SqlChargeStore } from "../../src/payments/store/sql-charge-store.ts"
import { address, buyer, paymentData, testApp } from "../support/http.ts"
import { truncateAll } from "../support/store-under-test.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "../support/test-database.ts"
import { checkSqlInvariants, random } from "./reservation-counter-fixtures.ts"

const TTL_MILLIS = 21600 * 1000

/** The application on `sql` (emptied first), as `npm start` wires it: every store on one database. */
const withApplication = <A, E>(effect: Effect.Effect<A, E, any>): Effect.Effect<A, E, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* truncateAll
    const client = Layer.succeed(SqlClient.SqlClient, sql)
    return yield* Effect.provide(
      effect,
      testApp({
        store: Layer.provide(SqlCheckoutStore, client),
        vaultStore: Layer.provide(SqlVaultStore, client),
        chargeStore: Layer.provide(SqlChargeStore, client),
        orderStore: Layer.provide(SqlOrderStore, client)
      })
    )
  }) as Effect.Effect<A, E, SqlClient.SqlClient>

const createRequest = (items: CheckoutSessionCreateRequest["items"]): CheckoutSessionCreateRequest => ({
  items,
  buyer,
  fulfillment_address: address
})

/** Counter exact, `stockLevels` as summed from the rows; returns the levels by product. */
const levelsNow = Effect.gen(function*() {
  const now = yield* Clock.currentTimeMillis
  yield* checkSqlInvariants(now)
  const levels = yield* Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(now))
  return Object.fromEntries(levels.map((level) => [level.productId, [level.onHand, level.reserved] as const]))
})

const serviceSequence = (name: string, database: TestDatabase) =>
  layer(database, { timeout: 60_000 })(name, (it) => {
    it.effect("create / update / complete / cancel / expire keep the counter exact", () =>
      withApplication(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        expect(yield* levelsNow).toMatchObject({ "tshirt-classic": [100, 0], "print-limited": [3, 0] })

        const a = yield* checkout.create(
          createRequest([{ id: "tshirt-classic", quantity: 2 }, { id: "mug-ceramic", quantity: 1 }])
        )
        const b = yield* checkout.create(
          createRequest([{ id: "print-limited", quantity: 2 }, { id: "tshirt-classic", quantity: 1 }])
        )
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 3],
          "mug-ceramic": [250, 1],
          "print-limited": [3, 2]
        })

        // Items changed (one removed, one added, one lowered), then unchanged, then not given.
        yield* TestClock.adjust(1_000)
        yield* checkout.update(a.id, {
          items: [{ id: "tshirt-classic", quantity: 1 }, { id: "hoodie-zip", quantity: 3 }]
        })
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 2],
          "mug-ceramic": [250, 0],
          "hoodie-zip": [40, 3]
        })
        yield* TestClock.adjust(1_000)
        yield* checkout.update(a.id, {
          items: [{ id: "hoodie-zip", quantity: 3 }, { id: "tshirt-classic", quantity: 1 }]
        })
        yield* checkout.update(a.id, { fulfillment_option_id: "express" })
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 2],
          "mug-ceramic": [250, 0],
          "hoodie-zip": [40, 3]
        })
        // Not enough stock: nothing is written.
        const refused = yield* Effect.flip(checkout.update(a.id, { items: [{ id: "print-limited", quantity: 2 }] }))
        expect(refused._tag).toBe("OutOfStock")
        expect(yield* levelsNow).toMatchObject({
          "tshirt-classic": [100, 2],
          "print-limited": [3, 2],
          "hoodie-zip": [40, 3]
        })

        // Completing consumes b's reservations.
        const completed = yield* checkout.complete(b.id, { payment_data: paymentData })
        expect(completed.status).toBe("completed")
        expect(yield* levelsNow).toMatchObject({ "tshirt-classic": [99, 1], "print-limited": [1, 0] })

        // Canceling releases them.
        const c = yield* checkout.create(createRequest([{ id: "print-limited", quantity: 1 }]))
        expect(yield* levelsNow).toMatchObject({ "print-limited": [1, 1] })
        yield* checkout.cancel(c.id)
        expect(yield* levelsNow).toMatchObject({ "print-limited": [1, 0] })

        // a and d expire; until the sweep their rows are still there, counted by the counter, and
        // available to everyone.
        const d = yield* checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }]))
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 4] })
        yield* TestClock.adjust(TTL_MILLIS)
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 0], "tshirt-classic": [99, 0] })
        const e = yield* checkout.create(
          createRequest([{ id: "hoodie-zip", quantity: 40 }, { id: "print-limited", quantity: 1 }])
        )
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 40], "print-limited": [1, 1] })
        const sql = yield* SqlClient.SqlClient
        const [hoodie] = yield* sql<{ reserved: number }>`
          SELECT reserved FROM stock_totals WHERE product_id = 'hoodie-zip'`
        expect(hoodie!.reserved).toBe(44)
        expect(Either.isLeft(yield* Effect.either(checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }])))))
          .toBe(true)

        expect(yield* checkout.expireDue(100)).toBe(2)
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 40], "tshirt-classic": [99, 0] })
        expect((yield* checkout.get(d.id)).status).toBe("expired")

        // The rest: one completed, one canceled; nothing stays reserved.
        yield* checkout.update(e.id, {
          items: [{ id: "hoodie-zip", quantity: 39 }, { id: "print-limited", quantity: 1 }]
        })
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 39] })
        yield* checkout.complete(e.id, { payment_data: paymentData })
        const f = yield* checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }]))
        yield* checkout.cancel(f.id)
        const levels = yield* levelsNow
        expect(levels).toMatchObject({ "hoodie-zip": [1, 0], "print-limited": [0, 0], "tshirt-classic": [99, 0] })
        for (const [, reserved] of Object.values(levels)) expect(reserved).toBe(0)
        expect(yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM reservations`).toEqual([{ n: 0 }])
      })))
  })

serviceSequence("reservation counter through the checkout service: embedded PGlite", embeddedDatabase())

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  serviceSequence("reservation counter through the checkout service: PostgreSQL", postgresDatabase())

  // -------------------------------------------------------------------------------------------
  // Concurrency (real row locks: several connections)

  /**
   * Runs `effect`, turning a refusal of the domain (out of stock, session already final, …) into
   * `undefined`. A StorageError (a deadlock would be one) fails the test.
   */
  const refused = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(
      Effect.map((value): A | undefined => value),
      Effect.catchIf((error) => error._tag !== "StorageError", () => Effect.succeed(undefined))
    )

  layer(postgresDatabase({ poolSize: 10 }), { timeout: 120_000 })("concurrency on PostgreSQL", (it) => {
    it.effect("concurrent creates never oversell", () =>
      withApplication(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const created = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => i),
          (i) =>
            checkout.create(createRequest(
              i % 2 === 0
                ? [{ id: "print-limited", quantity: 1 }, { id: "tshirt-classic", quantity: 1 }]
                : [{ id: "tshirt-classic", quantity: 1 }, { id: "print-limited", quantity: 1 }]
            )).pipe(Effect.either),
          { concurrency: "unbounded" }
        )
        expect(created.filter(Either.isRight)).toHaveLength(3)
        for (const failed of created.filter(Either.isLeft)) expect(failed.left._tag).toBe("OutOfStock")
        expect(yield* levelsNow).toMatchObject({ "print-limited": [3, 3], "tshirt-classic": [100, 3] })
      })))

    it.effect("concurrent creates, updates, cancels, completions and sweeps: no oversell, no deadlock, exact counter", () =>
      withApplication(Effect.gen(function*() {
        const checkout = yield* CheckoutService
        // Sessions that will have expired, unswept, when the storm starts: one product each, a
        // T-shirt then a mug then a T-shirt… (a sweep releases them oldest first, so it meets
        // their products out of order), while the creates lock both.
        const stale = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) =>
          Effect.zipLeft(
            checkout.create(createRequest([
              i % 2 === 0 ? { id: "tshirt-classic", quantity: 1 } : { id: "mug-ceramic", quantity: 1 }
            ])),
            TestClock.adjust(1)
          ))
        yield* TestClock.adjust(TTL_MILLIS)
        const live = yield* Effect.forEach(
          Array.from({ length: 10 }, () => 0),
          () => checkout.create(createRequest([{ id: "hoodie-zip", quantity: 1 }, { id: "mug-ceramic", quantity: 1 }]))
        )
        expect(yield* levelsNow).toMatchObject({ "hoodie-zip": [40, 10] })

        const rng = random(7)
        const creates = Array.from({ length: 40 }, () => {
          const items = [
            { id: "hoodie-zip", quantity: 1 },
            { id: "mug-ceramic", quantity: 1 },
            { id: "tshirt-classic", quantity: 1 }
          ]
          return items.map((item) => [rng.next(), item] as const).sort(([a], [b]) => a - b).map(([, item]) => item)
        })
        const tasks: Array<Effect.Effect<unknown, unknown>> = [
          ...creates.map((items) => refused(checkout.create(createRequest(items)))),
          ...live.map((session, i) =>
            refused(checkout.update(session.id, {
              items: i % 2 === 0
                ? [{ id: "tshirt-classic", quantity: 2 }, { id: "hoodie-zip", quantity: 2 }]
                : [{ id: "mug-ceramic", quantity: 3 }]
            }))
          ),
          ...live.slice(0, 3).map((session) => refused(checkout.cancel(session.id))),
          ...live.slice(3, 6).map((session) => refused(checkout.complete(session.id, { payment_data: paymentData }))),
          ...Array.from({ length: 4 }, () => checkout.expireDue(3))
        ]
        const shuffled = tasks.map((task) => [rng.next(), task] as const).sort(([a], [b]) => a - b).map(([, t]) => t)
        yield* Effect.all(shuffled, { concurrency: "unbounded", discard: true })

        while ((yield* checkout.expireDue(100)) > 0) {
          // sweep what the concurrent sweeps left
        }
        for (const session of stale) expect((yield* checkout.get(session.id)).status).toBe("expired")
        const levels = yield* levelsNow
        for (const [productId, [onHand, reserved]] of Object.entries(levels)) {
          expect(reserved, productId).toBeLessThanOrEqual(onHand)
          expect(onHand, productId).toBeGreaterThanOrEqual(0)
        }
        // Units held equal what the active sessions ask for; units gone equal what was completed.
        const sql = yield* SqlClient.SqlClient
        const created = yield* sql<{ data: Session; internal: Pick<Session, "items"> }>`
          SELECT data, internal FROM checkout_sessions`
        const held = new Map<string, number>()
        const sold = new Map<string, number>()
        for (const { data, internal } of created) {
          const target = ["not_ready_for_payment", "ready_for_payment"].includes(data.status)
            ? held
            : data.status === "completed"
            ? sold
            : undefined
          for (const item of target === undefined ? [] : internal.items) {
            target!.set(item.id, (target!.get(item.id) ?? 0) + item.quantity)
          }
        }
        expect(levels["hoodie-zip"]).toEqual([40 - (sold.get("hoodie-zip") ?? 0), held.get("hoodie-zip") ?? 0])
        expect(levels["mug-ceramic"]).toEqual([250 - (sold.get("mug-ceramic") ?? 0), held.get("mug-ceramic") ?? 0])
        expect(levels["tshirt-classic"]).toEqual([
          100 - (sold.get("tshirt-classic") ?? 0),
          held.get("tshirt-classic") ?? 0
        ])
        expect((held.get("hoodie-zip") ?? 0) + (sold.get("hoodie-zip") ?? 0)).toBeLessThanOrEqual(40)
      })))
  })
})
