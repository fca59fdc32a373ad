/**
 * The benchmark's stack floor: the least an HttpApi server on our exact versions (effect,
 * @effect/platform, @effect/platform-node, @effect/sql-pg) can do per request against the same
 * PostgreSQL, so the service can be measured against what the stack itself costs.
 *
 * - `GET /read/:id` reads one row by primary key (a jsonb document of about a session's size)
 *   and returns it;
 * - `POST /write/:id` (body `{quantity}`) runs one transaction: `SELECT … FOR UPDATE` the row,
 *   `UPDATE` it, `INSERT` an event row.
 *
 * No auth, no logging, no idempotency. The transaction is uninterruptible, as the service's are. Env: DATABASE_URL (required), PORT, HOST (127.0.0.1),
 * DATABASE_POOL_SIZE (10, like the service). Run by `scripts/bench.ts` as its own process.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schema } from "effect"
import { createServer } from "node:http"

export const FLOOR_ROWS = 1000

const IdPath = Schema.Struct({ id: Schema.NumberFromString })

class FloorGroup extends HttpApiGroup.make("floor")
  .add(HttpApiEndpoint.get("read", "/read/:id").setPath(IdPath).addSuccess(Schema.Unknown))
  .add(
    HttpApiEndpoint.post("write", "/write/:id")
      .setPath(IdPath)
      .setPayload(Schema.Struct({ quantity: Schema.Int }))
      .addSuccess(Schema.Struct({ id: Schema.Number, counter: Schema.Number }), { status: 201 })
  )
  .add(HttpApiEndpoint.get("health", "/healthz").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
{}

class FloorApi extends HttpApi.make("floor").add(FloorGroup) {}

/** A document of roughly the size and shape of a checkout session. */
const sampleDocument = (id: number) => ({
  id: `doc_${id}`,
  status: "ready_for_payment",
  currency: "usd",
  line_items: Array.from({ length: 2 }, (_, i) => ({
    id: `li_${id}_${i}`,
    item: { id: `product-${i}`, quantity: 1 + i },
    base_amount: 2500,
    discount: 0,
    subtotal: 2500,
    tax: 222,
    total: 2722
  })),
  fulfillment_address: {
    name: "Ada Lovelace",
    line_one: "1 Main Street",
    city: "New York",
    state: "NY",
    country: "US",
    postal_code: "10001"
  },
  fulfillment_options: ["standard", "express"].map((o) => ({
    type: "shipping",
    id: o,
    title: o,
    subtotal: 500,
    tax: 44,
    total: 544
  })),
  totals: ["items_base_amount", "subtotal", "fulfillment", "tax", "total"].map((type) => ({
    type,
    display_text: type,
    amount: 5000
  })),
  messages: [],
  links: [{ type: "terms_of_use", url: "https://example.com/terms" }, {
    type: "privacy_policy",
    url: "https://example.com/privacy"
  }]
})

const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS floor_items (id integer PRIMARY KEY, counter bigint NOT NULL, data jsonb NOT NULL)`
  yield* sql`CREATE TABLE IF NOT EXISTS floor_events (id bigserial PRIMARY KEY, item_id integer NOT NULL, quantity integer NOT NULL, created_at timestamptz NOT NULL)`
  const rows = Array.from(
    { length: FLOOR_ROWS },
    (_, id) => ({ id, counter: 0, data: JSON.stringify(sampleDocument(id)) })
  )
  yield* sql`INSERT INTO floor_items ${sql.insert(rows)} ON CONFLICT (id) DO NOTHING`
})

const FloorHandlers = HttpApiBuilder.group(FloorApi, "floor", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("read", ({ path }) =>
        sql<{ data: unknown }>`SELECT data FROM floor_items WHERE id = ${path.id}`.pipe(
          Effect.map((rows) => rows[0]?.data ?? null),
          Effect.orDie
        ))
      .handle("write", ({ path, payload }) =>
        Effect.gen(function*() {
          const locked = yield* sql<
            { counter: string }
          >`SELECT counter FROM floor_items WHERE id = ${path.id} FOR UPDATE`
          const counter = Number(locked[0]?.counter ?? 0) + payload.quantity
          yield* sql`UPDATE floor_items SET counter = ${counter} WHERE id = ${path.id}`
          yield* sql`INSERT INTO floor_events (item_id, quantity, created_at) VALUES (${path.id}, ${payload.quantity}, ${
            new Date().toISOString()
          }::timestamptz)`
          return { id: path.id, counter }
        }).pipe(
          sql.withTransaction,
          // Like the service's transactions: run to COMMIT/ROLLBACK when the client goes away (an
          // interrupted statement is cancelled through another pool connection while the
          // transaction keeps its row lock; with a full pool that stalls everything for seconds).
          Effect.uninterruptible,
          Effect.orDie
        ))
      .handle("health", () => Effect.succeed({ ok: true }))
  }))

const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) {
  console.error("DATABASE_URL is required")
  process.exit(1)
}

const SqlLive = PgClient.layer({
  url: Redacted.make(databaseUrl),
  maxConnections: Number(process.env["DATABASE_POOL_SIZE"] ?? "10")
})

const ServerLive = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(FloorApi).pipe(Layer.provide(FloorHandlers))),
  HttpServer.withLogAddress,
  Layer.provide(
    NodeHttpServer.layer(createServer, {
      port: Number(process.env["PORT"] ?? "8090"),
      host: process.env["HOST"] ?? "127.0.0.1"
    })
  ),
  Layer.provide(Layer.effectDiscard(setup).pipe(Layer.provideMerge(SqlLive)))
)

NodeRuntime.runMain(Layer.launch(ServerLive))
