/**
 * The benchmark's stack floor: the least an HttpApi server on our exact versions (effect,
 * @effect/platform, @effect/platform-node, @effect/sql-pg) can do per request against the same
 * PostgreSQL, so the service can be measured against what the stack itself costs.
 *
 * - `GET /read/:id` reads one row by primary key (a jsonb document of a session's size and shape)
 *   and returns it;
 * - `POST /write/:id` (body `{quantity}`) runs one transaction: `SELECT … FOR UPDATE` the row,
 *   `UPDATE` it, `INSERT` an event row.
 *
 * No auth, no logging, no idempotency. The transaction is uninterruptible, as the service's are. Env: DATABASE_URL (required), PORT, HOST (127.0.0.1),
 * DATABASE_POOL_SIZE (10, like the service). Run by the bench (`bench-setup.ts`) as its own process.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schema } from "effect"
import { createServer } from "node:http"

const FLOOR_ROWS = 1000

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

/**
 * A document of the size and shape of the session the bench reads (≈ 3 KB: two line items, two
 * fulfillment options, totals, links, the payment capabilities, buyer and address), so that the
 * floor's read moves as many bytes through PostgreSQL, the driver and the socket as our GET does
 * (the bench's paired runs print both sizes and note it when they differ by more than 10 %).
 */
const sampleDocument = (id: number) => {
  const at = (days: number) => new Date(Date.UTC(2026, 10, 25 + days, 12)).toISOString()
  const spec = "https://acp.dev/handlers/dev.proto.tokenized.card/2026-01-30"
  return {
    id: `doc_${String(id).padStart(22, "0")}`,
    status: "ready_for_payment",
    currency: "usd",
    line_items: [["tshirt-classic", 1, 2500, 222], ["mug-ceramic", 2, 2800, 249]].map((
      [item, quantity, base, tax]
    ) => ({
      id: `li_${String(id).padStart(12, "0")}${String(item).length}${"0".repeat(11)}`,
      item: { id: item, quantity },
      base_amount: base,
      discount: 0,
      subtotal: base,
      tax,
      total: Number(base) + Number(tax)
    })),
    fulfillment_options: [["standard", "Standard shipping", "USPS", 4, 500, 44], [
      "express",
      "Express shipping",
      "UPS",
      1,
      1500,
      133
    ]].map(([option, title, carrier, days, subtotal, tax]) => ({
      type: "shipping",
      id: option,
      title,
      subtitle: `${days}-${Number(days) + 1} business days`,
      carrier,
      earliest_delivery_time: at(Number(days)),
      latest_delivery_time: at(Number(days) + 2),
      subtotal,
      tax,
      total: Number(subtotal) + Number(tax)
    })),
    totals: [["items_base_amount", "Items", 5300], ["subtotal", "Subtotal", 5300], ["fulfillment", "Shipping", 500], [
      "tax",
      "Tax",
      515
    ], ["total", "Total", 6315]].map(([type, display_text, amount]) => ({ type, display_text, amount })),
    messages: [],
    links: [{ type: "terms_of_use", url: "https://merchant.example/legal/terms" }, {
      type: "privacy_policy",
      url: "https://merchant.example/legal/privacy"
    }],
    capabilities: {
      payment: {
        handlers: [{
          id: "card_tokenized",
          name: "dev.proto.tokenized.card",
          version: "2026-01-30",
          spec,
          requires_delegate_payment: true,
          requires_pci_compliance: false,
          psp: "acp_vault",
          config_schema: `${spec}/config.schema.json`,
          instrument_schemas: [`${spec}/instrument.schema.json`],
          config: {
            accepted_brands: ["visa", "mastercard", "amex", "discover"],
            accepted_funding_types: ["credit", "debit"],
            supports_3ds: true,
            environment: "test"
          }
        }]
      },
      interventions: {
        supported: ["3ds", "address_verification"],
        required: [],
        enforcement: "conditional",
        display_context: "native",
        redirect_context: "none",
        max_redirects: 1,
        max_interaction_depth: 2
      },
      extensions: [{
        name: "dev.proto.discount",
        extends: ["$.CheckoutSessionCreateRequest.discounts", "$.CheckoutSessionUpdateRequest.discounts"],
        schema: "https://acp.dev/extensions/dev.proto.discount/2026-01-30/schema.json",
        spec: "https://acp.dev/extensions/dev.proto.discount/2026-01-30"
      }]
    },
    created_at: at(0),
    updated_at: at(0),
    expires_at: at(1),
    discounts: { codes: [], applied: [], rejected: [] },
    buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
    fulfillment_address: {
      name: "Ada Lovelace",
      line_one: "1 Main Street",
      city: "New York",
      state: "NY",
      country: "US",
      postal_code: "10001"
    },
    fulfillment_option_id: "standard"
  }
}

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
