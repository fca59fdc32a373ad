/**
 * `OrderStore` and `ReceivedEventsStore` against memory, SQL on embedded PGlite and SQL on
 * PostgreSQL (only with `TEST_DATABASE_URL`), plus two senders sharing one PostgreSQL database,
 * and the SQL rows holding only a checkout summary (which only SQL has).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option, Ref } from "effect"
import { makeWebhookSender } from "../../src/orders/http/webhook-sender.ts"
import { makeOrderEvent } from "../../src/orders/model/order-event.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import { WebhookTransport } from "../../src/orders/webhook-transport.ts"
import { AppConfig } from "../../src/platform/config.ts"
import { SqlReceivedEventsStore } from "../../src/webhook-receiver/store/sql-received-events-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryOrderStore } from "../doubles/memory-order-store.ts"
import { MemoryReceivedEventsStore } from "../doubles/memory-received-events-store.ts"
import { testConfig } from "../support/test-config.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "../support/test-database.ts"
import { orderStoreContract, sampleOrder } from "./order-store.contract.ts"

const sqlStores = Layer.merge(SqlOrderStore, SqlReceivedEventsStore)

/**
 * Rows only SQL can hold: an `orders` row holding only the checkout summary (no `type: "order"`) is
 * not an order for the store; an outbox payload that is not an order event is a storage failure.
 */
const sqlOnlyRows = (name: string, database: TestDatabase) =>
  layer(SqlOrderStore.pipe(Layer.provideMerge(database)), { timeout: 60_000 })(name, (it) => {
    it.effect("a row holding only a checkout summary is neither read nor listed", () =>
      Effect.gen(function*() {
        const store = yield* OrderStore
        const sql = yield* SqlClient.SqlClient
        const createdAt = Date.parse("2026-03-01T00:00:00.000Z")
        const full = sampleOrder()
        yield* store.saveOrder({ order: full, sessionId: full.checkout_session_id, createdAt })
        const summary = {
          id: "ord_summary_only",
          checkout_session_id: "cs_summary_only",
          permalink_url: "https://m.test/o"
        }
        yield* sql`
          INSERT INTO orders (id, checkout_session_id, data, created_at)
          VALUES (${summary.id}, ${summary.checkout_session_id}, ${JSON.stringify(summary)}::json,
                  ${new Date(createdAt + 1000).toISOString()}::timestamptz)`
        expect(yield* store.getOrder(summary.id)).toEqual(Option.none())
        expect((yield* store.listOrders({ limit: 1 })).map((stored) => stored.order.id)).toEqual([full.id])
        expect(yield* store.listOrders({ search: summary.id, limit: 10 })).toEqual([])
        expect(yield* store.listOrders({ search: summary.checkout_session_id, limit: 10 })).toEqual([])
      }))

    it.effect("an outbox payload that is not an order event is a storage failure when claimed, not a crash", () =>
      Effect.gen(function*() {
        const store = yield* OrderStore
        const sql = yield* SqlClient.SqlClient
        const now = Date.parse("2026-03-02T00:00:00.000Z")
        const order = sampleOrder()
        yield* store.saveOrderWithEvent(
          { order, sessionId: order.checkout_session_id, createdAt: now },
          { id: "evt_unreadable", payload: makeOrderEvent("order_create", order), now }
        )
        yield* sql`UPDATE webhook_outbox SET payload = '{"type":"order_create","data":{"id":"x"}}'::json
                   WHERE id = 'evt_unreadable'`
        const claimed = yield* Effect.flip(store.claimDue(now, 100, 60_000))
        expect(claimed._tag).toBe("StorageError")
        expect(String(claimed.cause)).toContain("evt_unreadable")
      }))
  })

sqlOnlyRows("OrderStore: rows only SQL holds, SQL on embedded PGlite", embeddedDatabase())

orderStoreContract(
  "OrderStore + ReceivedEventsStore: memory",
  Layer.merge(MemoryOrderStore, MemoryReceivedEventsStore).pipe(Layer.provide(freshMemoryDatabase))
)

orderStoreContract(
  "OrderStore + ReceivedEventsStore: SQL on embedded PGlite",
  sqlStores.pipe(Layer.provide(embeddedDatabase()))
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  orderStoreContract(
    "OrderStore + ReceivedEventsStore: SQL on PostgreSQL",
    sqlStores.pipe(Layer.provide(postgresDatabase()))
  )
  sqlOnlyRows("OrderStore: rows only SQL holds, SQL on PostgreSQL", postgresDatabase())

  it.live(
    "two senders on one database deliver every event exactly once, each order in sequence",
    () =>
      Effect.gen(function*() {
        const store = yield* OrderStore
        const orders = Array.from({ length: 20 }, () => sampleOrder())
        for (const order of orders) {
          yield* store.transaction(Effect.gen(function*() {
            yield* store.saveOrder({ order, sessionId: order.checkout_session_id, createdAt: Date.now() })
            for (const [i, status] of (["created", "confirmed", "shipped"] as const).entries()) {
              yield* store.enqueueEvent({
                id: `evt_${order.id}_${i}`,
                payload: makeOrderEvent(i === 0 ? "order_create" : "order_update", { ...order, status }),
                now: Date.now()
              })
            }
          }))
        }
        const received = yield* Ref.make<ReadonlyArray<{ requestId: string; body: string }>>([])
        const endpoint = WebhookTransport.of({
          post: (request) =>
            Effect.gen(function*() {
              yield* Effect.sleep("2 millis") // overlap the two workers
              yield* Ref.update(
                received,
                (list) => [...list, { requestId: request.headers["request-id"]!, body: request.body }]
              )
              return { status: 200, retryAfter: undefined }
            })
        })
        const senders = yield* Effect.all(
          [makeWebhookSender({ batchSize: 4 }), makeWebhookSender({ batchSize: 4 })]
        ).pipe(Effect.provideService(WebhookTransport, endpoint))
        const drain = (sender: (typeof senders)[number]) =>
          Effect.gen(function*() {
            for (let idle = 0; idle < 5;) {
              const reports = yield* sender.deliverDue
              idle = reports.length === 0 ? idle + 1 : 0
              if (reports.length === 0) yield* Effect.sleep("10 millis")
            }
          })
        yield* Effect.all(senders.map(drain), { concurrency: "unbounded" })

        const deliveries = yield* Ref.get(received)
        const ids = deliveries.map((d) => d.requestId)
        expect(ids).toHaveLength(60)
        expect(new Set(ids).size).toBe(60)
        for (const order of orders) {
          const statuses = deliveries
            .map((d) => JSON.parse(d.body) as { data: { id: string; status: string } })
            .filter((e) => e.data.id === order.id)
            .map((e) => e.data.status)
          expect(statuses).toEqual(["created", "confirmed", "shipped"])
        }
        expect(yield* store.countByState).toEqual({ pending: 0, delivered: 60, dead: 0 })
      }).pipe(
        Effect.provide(
          SqlOrderStore.pipe(
            Layer.provideMerge(postgresDatabase({ poolSize: 6 })),
            Layer.merge(Layer.succeed(AppConfig, testConfig({ webhookUrl: Option.some("http://receiver.test/hook") })))
          )
        )
      ),
    60_000
  )
})
