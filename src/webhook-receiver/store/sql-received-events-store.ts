/**
 * `ReceivedEventsStore` over PostgreSQL (`received_events`, `received_orders`; migration 0004).
 * `recordEvent` is one statement: the event `ON CONFLICT DO NOTHING` (Request-Id key, unique body hash:
 * a concurrent redelivery waits for the first, then does nothing) and, if it is new, the order's upsert.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { iso, jsonValue } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StorageError } from "../../db/storage-error.ts"
import {
  type ReceivedEvent,
  ReceivedEventsStore,
  type ReceivedEventsStoreService,
  type ReceivedOrder
} from "../received-events-store.ts"

interface EventRow {
  readonly request_id: string
  readonly body_hash: string
  readonly order_id: string
  readonly type: string
  readonly status: string
  readonly payload: unknown
  readonly received_ms: number | string
}

interface OrderRow {
  readonly order_id: string
  readonly status: string
  readonly last_request_id: string
  readonly payload: unknown
  readonly updated_ms: number | string
}

const parse = <A>(f: () => A) =>
  Effect.try({ try: f, catch: (cause) => new StorageError({ reason: "failure", cause }) })

const toEvent = (row: EventRow) =>
  parse((): ReceivedEvent => ({
    requestId: row.request_id,
    bodyHash: row.body_hash,
    orderId: row.order_id,
    type: row.type,
    status: row.status,
    payload: jsonValue(row.payload),
    receivedAt: Math.round(Number(row.received_ms))
  }))

const toOrder = (row: OrderRow) =>
  parse((): ReceivedOrder => ({
    orderId: row.order_id,
    status: row.status,
    lastRequestId: row.last_request_id,
    payload: jsonValue(row.payload),
    updatedAt: Math.round(Number(row.updated_ms))
  }))

export const make: Effect.Effect<ReceivedEventsStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)

  // The order's state is taken from the inserted row, so the body is sent once.
  const recordEvent = (event: ReceivedEvent) =>
    Effect.suspend(() => {
      // Parsed JSON within the depth bound (`ReceivedEvent.payload`): stringify cannot throw on it.
      const payload = JSON.stringify(event.payload)
      return run(sql<{ stored: number }>`
        WITH inserted AS (
          INSERT INTO received_events (request_id, body_hash, order_id, type, status, payload, received_at)
          VALUES (${event.requestId}, ${event.bodyHash}, ${event.orderId}, ${event.type}, ${event.status},
                  ${payload}::json, ${iso(event.receivedAt)}::timestamptz)
          ON CONFLICT DO NOTHING
          RETURNING request_id, order_id, status, payload, received_at
        ), latest AS (
          INSERT INTO received_orders (order_id, status, last_request_id, payload, updated_at)
          SELECT order_id, status, request_id, payload, received_at
          FROM inserted
          ON CONFLICT (order_id) DO UPDATE
          SET status = EXCLUDED.status, last_request_id = EXCLUDED.last_request_id,
              payload = EXCLUDED.payload, updated_at = EXCLUDED.updated_at
          WHERE ${event.type} <> 'order_create'
          RETURNING order_id
        )
        SELECT (SELECT COUNT(*) FROM inserted)::int AS stored`).pipe(
        Effect.map((rows) => (Number(rows[0]?.stored ?? 0) > 0 ? "stored" as const : "duplicate" as const))
      )
    })

  const orderColumns = sql.literal(
    `order_id, status, last_request_id, payload, (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms`
  )

  return ReceivedEventsStore.of({
    recordEvent,
    getOrder: (orderId) =>
      run(sql<OrderRow>`SELECT ${orderColumns} FROM received_orders WHERE order_id = ${orderId}`).pipe(
        Effect.flatMap((rows) => (rows[0] ? Effect.map(toOrder(rows[0]), Option.some) : Effect.succeed(Option.none())))
      ),
    listEvents: (orderId) =>
      run(sql<EventRow>`
        SELECT request_id, body_hash, order_id, type, status, payload,
               (extract(epoch FROM received_at) * 1000)::float8 AS received_ms
        FROM received_events WHERE order_id = ${orderId} ORDER BY receipt`).pipe(
        Effect.flatMap((rows) => Effect.forEach(rows, toEvent))
      ),
    listOrders: (limit) =>
      run(sql<OrderRow>`
        SELECT ${orderColumns} FROM received_orders
        ORDER BY updated_at DESC, order_id
        LIMIT ${Math.max(0, Math.floor(limit))}`).pipe(Effect.flatMap((rows) => Effect.forEach(rows, toOrder)))
  })
})

export const SqlReceivedEventsStore: Layer.Layer<ReceivedEventsStore, never, SqlClient.SqlClient> = Layer.effect(
  ReceivedEventsStore,
  make
)
