/**
 * `OrderStore` over PostgreSQL (`orders`, migration 0001; `webhook_outbox`, 0004); semantics in
 * `order-store.ts`. Why `claimDue`, one statement, never gives two workers one lease:
 * `docs/concurrency.md`, "The order-event outbox". No index serves `listOrders`: it is the console's.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, type ParseResult, Schema } from "effect"
import { orderSaveArguments } from "../../db/functions/order-save-with-event.ts"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso, jsonValue } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StorageError } from "../../db/storage-error.ts"
import { isStoredOrderEvent, storedEventJson, storedOrderJson } from "../model/order-json.ts"
import { Order } from "../model/order.ts"
import {
  type DeliveryState,
  encodeOrderChange,
  OrderStore,
  type OrderStoreService,
  type OutboxEvent,
  pendingEvent,
  searchTerm,
  type StoredFullOrder
} from "../order-store.ts"

const decodeOrder = Schema.decodeUnknown(Order)

const ms = (value: number | string | null): number | null => (value === null ? null : Math.round(Number(value)))

const fromParseError = (error: ParseResult.ParseError): StorageError =>
  new StorageError({ reason: "failure", cause: error })

interface OutboxRow {
  readonly id: string
  readonly order_id: string
  readonly sequence: number | string
  readonly type: string
  readonly payload: unknown
  readonly state: string
  readonly attempts: number | string
  readonly next_ms: number | string
  readonly first_ms: number | string | null
  readonly last_error: string | null
  readonly last_status: number | string | null
  readonly created_ms: number | string
  readonly delivered_ms: number | string | null
}

const OUTBOX_COLUMNS = `id, order_id, sequence, type, payload, state, attempts,
  (extract(epoch FROM next_attempt_at) * 1000)::float8 AS next_ms,
  (extract(epoch FROM first_attempt_at) * 1000)::float8 AS first_ms,
  last_error, last_status,
  (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
  (extract(epoch FROM delivered_at) * 1000)::float8 AS delivered_ms`

const toEvent = (row: OutboxRow): Effect.Effect<OutboxEvent, StorageError> => {
  let payload: unknown
  try {
    payload = jsonValue(row.payload)
  } catch (cause) {
    return Effect.fail(new StorageError({ reason: "failure", cause }))
  }
  if (!isStoredOrderEvent(payload)) {
    return Effect.fail(
      new StorageError({
        reason: "failure",
        cause: new Error(`stored order event ${row.id}: not an event of a known type with an order`)
      })
    )
  }
  return Effect.succeed({
    id: row.id,
    orderId: row.order_id,
    sequence: Number(row.sequence),
    type: payload.type,
    payload,
    state: row.state as DeliveryState,
    attempts: Number(row.attempts),
    nextAttemptAt: ms(row.next_ms)!,
    firstAttemptAt: ms(row.first_ms),
    lastError: row.last_error,
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    createdAt: ms(row.created_ms)!,
    deliveredAt: ms(row.delivered_ms)
  })
}

export const make: Effect.Effect<OrderStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(OUTBOX_COLUMNS)

  const run = statementRunner(sql)

  const transaction: OrderStoreService["transaction"] = sqlTransaction(sql)

  const events = (rows: ReadonlyArray<OutboxRow>) => Effect.forEach(rows, toEvent)

  type OrderRow = { readonly checkout_session_id: string; readonly data: unknown; readonly created_ms: number | string }
  /** None for a row holding only the checkout summary (no `type: "order"`). */
  const orderFromRow = (row: OrderRow) =>
    Effect.try({
      try: () => jsonValue(row.data),
      catch: (cause) => new StorageError({ reason: "failure", cause })
    })
      .pipe(
        Effect.flatMap((json) =>
          typeof json === "object" && json !== null && (json as { type?: unknown }).type === "order"
            ? Effect.map(
              Effect.mapError(decodeOrder(json), fromParseError),
              (order) => Option.some({ order, sessionId: row.checkout_session_id, createdAt: ms(row.created_ms)! })
            )
            : Effect.succeed(Option.none<StoredFullOrder>())
        )
      )
  const orderFromRows = (rows: ReadonlyArray<OrderRow>) =>
    rows[0] === undefined ? Effect.succeed(Option.none<StoredFullOrder>()) : orderFromRow(rows[0])

  const getOrder = (id: string) =>
    run(sql<OrderRow>`
      SELECT checkout_session_id, data, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
      FROM orders WHERE id = ${id}`).pipe(Effect.flatMap(orderFromRows))

  const findOrderByPermalink = (token: string) =>
    run(sql<OrderRow>`
      SELECT checkout_session_id, data, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
      FROM orders WHERE permalink_token = ${token}`).pipe(Effect.flatMap(orderFromRows))

  // The summary-only rows are left out by the query, so that `limit` counts full orders only.
  const listOrders: OrderStoreService["listOrders"] = (filter) => {
    const search = searchTerm(filter)
    return run(sql<OrderRow>`
      SELECT checkout_session_id, data, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
      FROM orders
      WHERE data->>'type' = 'order'
        AND ${filter.status === undefined ? sql`TRUE` : sql`data->>'status' = ${filter.status}`}
        AND ${search === undefined ? sql`TRUE` : sql`(id = ${search} OR checkout_session_id = ${search})`}
      ORDER BY created_at DESC, id DESC
      LIMIT ${Math.max(0, Math.floor(filter.limit))}`).pipe(
      Effect.flatMap((rows) => Effect.forEach(rows, orderFromRow)),
      Effect.map((found) => found.flatMap(Option.toArray))
    )
  }

  const lockOrder = (id: string) =>
    run(sql<OrderRow>`
      SELECT checkout_session_id, data, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
      FROM orders WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(orderFromRows))

  const saveOrder = (stored: StoredFullOrder) =>
    run(sql`
      INSERT INTO orders (id, checkout_session_id, data, created_at)
      VALUES (${stored.order.id}, ${stored.sessionId}, ${storedOrderJson(stored.order)}::json,
              ${iso(stored.createdAt)}::timestamptz)
      ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data`).pipe(Effect.asVoid)

  const enqueueEvent: OrderStoreService["enqueueEvent"] = ({ id, now, payload }) =>
    run(sql<OutboxRow>`
      INSERT INTO webhook_outbox (id, order_id, sequence, type, payload, state, attempts, next_attempt_at, created_at)
      SELECT ${id}, ${payload.data.id}, COALESCE(MAX(sequence), 0) + 1, ${payload.type},
             ${storedEventJson(payload)}::json, 'pending', 0, ${iso(now)}::timestamptz,
             ${iso(now)}::timestamptz
      FROM webhook_outbox WHERE order_id = ${payload.data.id}
      RETURNING ${columns}`).pipe(
      Effect.flatMap(events),
      Effect.flatMap((rows) =>
        rows[0]
          ? Effect.succeed(rows[0])
          : Effect.fail(new StorageError({ reason: "failure", cause: new Error("no row") }))
      )
    )

  // One statement (`order_save_with_event`); the event row is built from what was written, not read back.
  const saveOrderWithEvent: OrderStoreService["saveOrderWithEvent"] = (stored, event) =>
    run(sql<{ sequence: number | string | null }>`
      SELECT order_save_with_event(${orderSaveArguments(sql, encodeOrderChange({ stored, event }))}) AS sequence`).pipe(
      Effect.flatMap((rows): Effect.Effect<OutboxEvent, StorageError> =>
        rows[0]?.sequence === undefined || rows[0].sequence === null
          ? Effect.fail(new StorageError({ reason: "failure", cause: new Error("saveOrderWithEvent: no row") }))
          : Effect.succeed(pendingEvent(event, Number(rows[0].sequence)))
      )
    )

  const claimDue: OrderStoreService["claimDue"] = (now, limit, leaseMs) =>
    limit <= 0 ? Effect.succeed([]) : run(sql<OutboxRow>`
      WITH due AS (
        SELECT o.id AS due_id FROM webhook_outbox o
        WHERE o.state = 'pending'
          AND o.next_attempt_at <= ${iso(now)}::timestamptz
          AND (o.locked_until IS NULL OR o.locked_until <= ${iso(now)}::timestamptz)
          AND NOT EXISTS (
            SELECT 1 FROM webhook_outbox p
            WHERE p.order_id = o.order_id AND p.state = 'pending' AND p.sequence < o.sequence
          )
        ORDER BY o.next_attempt_at, o.created_at, o.id
        LIMIT ${Math.floor(limit)}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE webhook_outbox w
      SET attempts = w.attempts + 1,
          locked_until = ${iso(now + leaseMs)}::timestamptz,
          first_attempt_at = COALESCE(w.first_attempt_at, ${iso(now)}::timestamptz)
      FROM due WHERE w.id = due.due_id
      RETURNING ${columns}`)
      .pipe(
        Effect.flatMap(events),
        Effect.map((claimed) =>
          [...claimed].sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.createdAt - b.createdAt)
        )
      )

  const finishAttempts: OrderStoreService["finishAttempts"] = (finished) =>
    finished.length === 0 ? Effect.succeed([]) : run(sql<{ id: string }>`
      UPDATE webhook_outbox o
      SET state = v.state,
          next_attempt_at = v.next_attempt_at,
          last_status = v.last_status,
          last_error = v.last_error,
          delivered_at = CASE WHEN v.state = 'delivered' THEN v.at ELSE o.delivered_at END,
          locked_until = NULL
      FROM unnest(
        ${finished.map((f) => f.id)}::text[],
        ${finished.map((f) => f.attempt)}::int[],
        ${finished.map((f) => f.result.state)}::text[],
        ${finished.map((f) => iso(f.result.nextAttemptAt))}::timestamptz[],
        ${finished.map((f) => f.result.lastStatus)}::int[],
        ${finished.map((f) => f.result.lastError)}::text[],
        ${finished.map((f) => iso(f.result.at))}::timestamptz[]
      ) AS v (id, attempt, state, next_attempt_at, last_status, last_error, at)
      WHERE o.id = v.id AND o.state = 'pending' AND o.attempts = v.attempt
      RETURNING o.id`).pipe(
      Effect.map((rows) => {
        const recorded = new Set(rows.map((row) => row.id))
        return finished.map((f) => recorded.has(f.id))
      })
    )

  const getEvent = (id: string) =>
    run(sql<OutboxRow>`SELECT ${columns} FROM webhook_outbox WHERE id = ${id}`).pipe(
      Effect.flatMap(events),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  const listEvents: OrderStoreService["listEvents"] = (filter) =>
    run(sql<OutboxRow>`
      SELECT ${columns} FROM webhook_outbox
      WHERE ${filter.state === undefined ? sql`TRUE` : sql`state = ${filter.state}`}
        AND ${filter.orderId === undefined ? sql`TRUE` : sql`order_id = ${filter.orderId}`}
      ORDER BY created_at DESC, sequence DESC, id DESC
      LIMIT ${Math.max(0, Math.floor(filter.limit))}`).pipe(Effect.flatMap(events))

  const redrive: OrderStoreService["redrive"] = (id, now) =>
    run(sql<OutboxRow>`
      UPDATE webhook_outbox
      SET state = 'pending', attempts = 0, first_attempt_at = NULL, locked_until = NULL,
          next_attempt_at = ${iso(now)}::timestamptz
      WHERE id = ${id} AND state = 'dead'
      RETURNING ${columns}`).pipe(
      Effect.flatMap(events),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  const countByState = run(sql<{ state: string; count: number | string }>`
    SELECT state, COUNT(*)::int AS count FROM webhook_outbox GROUP BY state`).pipe(
    Effect.map((rows) => {
      const counts = { pending: 0, delivered: 0, dead: 0 }
      for (const row of rows) {
        if (row.state === "pending" || row.state === "delivered" || row.state === "dead") {
          counts[row.state] = Number(row.count)
        }
      }
      return counts
    })
  )

  return OrderStore.of({
    transaction,
    getOrder,
    findOrderByPermalink,
    listOrders,
    lockOrder,
    saveOrder,
    enqueueEvent,
    saveOrderWithEvent,
    claimDue,
    finishAttempts,
    getEvent,
    listEvents,
    redrive,
    countByState
  })
})

export const SqlOrderStore: Layer.Layer<OrderStore, never, SqlClient.SqlClient> = Layer.effect(OrderStore, make)
