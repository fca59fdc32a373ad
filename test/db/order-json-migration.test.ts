/**
 * Orders, queued events and received events stored as `jsonb` are kept by migration 0021 as JSON
 * text: the same values read back through the stores, the order still found by its permalink
 * token (a generated column dropped and added again), the queued event still delivered, and the
 * unique token still enforced. Needs TEST_DATABASE_URL.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { makeOrderEvent } from "../../src/orders/model/order-event.ts"
import { permalinkTokenOf } from "../../src/orders/model/order-permalink.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import { ReceivedEventsStore } from "../../src/webhook-receiver/received-events-store.ts"
import { SqlReceivedEventsStore } from "../../src/webhook-receiver/store/sql-received-events-store.ts"
import { sampleOrder } from "../orders/order-store.contract.ts"
import {
  atMigrationsBefore,
  freshPostgresDatabaseUrl,
  hasPostgres,
  migratedPostgres
} from "../support/test-database.ts"

const token = "AbCdEfGhIjKlMnOpQrStUv"
const stored = { ...sampleOrder("ord_legacy_json"), permalink_url: `https://merchant.test/order-status/${token}` }
const event = makeOrderEvent("order_create", stored)
const at = "2026-11-29T12:00:00.000Z"
const received = { type: "order_update", data: { id: "ord_elsewhere", status: "shipped", note: "Zoë \u00d8rsted" } }

describe.skipIf(!hasPostgres)("migration 0021: orders and order events as JSON text", () => {
  it.live("orders, queued and received events stored as jsonb read back the same, found and delivered", () =>
    Effect.gen(function*() {
      const url = yield* freshPostgresDatabaseUrl
      yield* atMigrationsBefore(
        url,
        "0021",
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`
          INSERT INTO orders (id, checkout_session_id, data, created_at)
          VALUES (${stored.id}, ${stored.checkout_session_id}, ${JSON.stringify(stored)}::jsonb, ${at})`
          yield* sql`
          INSERT INTO webhook_outbox (id, order_id, sequence, type, payload, state, next_attempt_at, created_at)
          VALUES ('evt_legacy', ${stored.id}, 1, 'order_create', ${
            JSON.stringify(event)
          }::jsonb, 'pending', ${at}, ${at})`
          yield* sql`
          INSERT INTO received_events (request_id, body_hash, order_id, type, status, payload, received_at)
          VALUES ('req_legacy', 'hash_legacy', 'ord_elsewhere', 'order_update', 'shipped',
                  ${JSON.stringify(received)}::jsonb, ${at})`
          yield* sql`
          INSERT INTO received_orders (order_id, status, last_request_id, payload, updated_at)
          VALUES ('ord_elsewhere', 'shipped', 'req_legacy', ${JSON.stringify(received)}::jsonb, ${at})`
        })
      )

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orders = yield* OrderStore
        const receiver = yield* ReceivedEventsStore
        const columns = yield* sql<{ column: string; type: string; compression: string }>`
          SELECT attrelid::regclass::text || '.' || attname AS column, atttypid::regtype::text AS type,
                 attcompression::text AS compression
          FROM pg_attribute
          WHERE (attrelid, attname) IN (('orders'::regclass, 'data'), ('webhook_outbox'::regclass, 'payload'),
                                        ('received_events'::regclass, 'payload'), ('received_orders'::regclass, 'payload'))
          ORDER BY 1`
        // Debian's and the official builds of PostgreSQL have LZ4.
        expect(columns).toEqual([
          { column: "orders.data", type: "json", compression: "l" },
          { column: "received_events.payload", type: "json", compression: "l" },
          { column: "received_orders.payload", type: "json", compression: "l" },
          { column: "webhook_outbox.payload", type: "json", compression: "l" }
        ])

        const byId = yield* orders.getOrder(stored.id)
        expect(Option.map(byId, (found) => found.order)).toEqual(Option.some(stored))
        expect(permalinkTokenOf(stored.permalink_url)).toBe(token)
        const byToken = yield* orders.findOrderByPermalink(token)
        expect(Option.map(byToken, (found) => found.order.id)).toEqual(Option.some(stored.id))
        expect((yield* orders.listOrders({ status: stored.status, limit: 10 })).map((found) => found.order.id))
          .toEqual([stored.id])

        // The token stays unique: another order with the same permalink is refused.
        const twin = sampleOrder("ord_twin")
        const duplicate = yield* Effect.exit(
          orders.saveOrder({
            order: { ...twin, permalink_url: stored.permalink_url },
            sessionId: twin.checkout_session_id,
            createdAt: Date.parse(at)
          })
        )
        expect(Exit.isFailure(duplicate)).toBe(true)

        const claimed = yield* orders.claimDue(Date.parse(at), 10, 60_000)
        expect(claimed.map((due) => [due.id, due.sequence, due.payload])).toEqual([["evt_legacy", 1, event]])
        // The next event of the order is numbered after the legacy one.
        const next = yield* orders.saveOrderWithEvent(
          { order: { ...stored, status: "shipped" }, sessionId: stored.checkout_session_id, createdAt: Date.parse(at) },
          {
            id: "evt_next",
            payload: makeOrderEvent("order_update", { ...stored, status: "shipped" }),
            now: Date.parse(at)
          }
        )
        expect(next.sequence).toBe(2)
        expect(Option.map(yield* orders.findOrderByPermalink(token), (found) => found.order.status))
          .toEqual(Option.some("shipped"))

        expect(Option.map(yield* receiver.getOrder("ord_elsewhere"), (found) => found.payload))
          .toEqual(Option.some(received))
        expect((yield* receiver.listEvents("ord_elsewhere")).map((found) => found.payload)).toEqual([received])
      }).pipe(
        Effect.provide(
          Layer.mergeAll(SqlOrderStore, SqlReceivedEventsStore).pipe(Layer.provideMerge(migratedPostgres(url)))
        )
      )
    }).pipe(Effect.scoped))
})
