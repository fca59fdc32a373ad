/**
 * Orders stored before permalinks carried a token get one when the database is migrated: the
 * order and its completed session's summary alike, and the order is then found by it. Needs
 * TEST_DATABASE_URL.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { migrations } from "../../src/db/migrations/index.ts"
import { permalinkTokenOf } from "../../src/orders/model/order-permalink.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import { freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0017"))

/** A full order as stored before permalinks had tokens. */
const legacyOrder = (permalink_url: string) => ({
  type: "order",
  id: "ord_legacy1",
  checkout_session_id: "cs_legacy1",
  permalink_url,
  status: "created",
  refunds: [],
  line_items: [],
  fulfillments: [],
  adjustments: [],
  totals: []
})

describe.skipIf(!hasPostgres)("migration 0017: order permalinks", () => {
  it.live("an order from before gets a capability URL, in the order and in its session", () =>
    Effect.gen(function*() {
      const url = yield* freshPostgresDatabaseUrl
      const client = Layer.provide(
        PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }),
        Reactivity.layer
      )
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* PgMigrator.run({ loader: Migrator.fromRecord(before) })
        const legacy = "https://shop.example/orders/ord_legacy1"
        yield* sql`
          INSERT INTO checkout_sessions (id, status, data, expires_at)
          VALUES ('cs_legacy1', 'completed',
                  ${JSON.stringify({ id: "cs_legacy1", order: { id: "ord_legacy1", permalink_url: legacy } })}::jsonb,
                  now())`
        yield* sql`
          INSERT INTO orders (id, checkout_session_id, data)
          VALUES ('ord_legacy1', 'cs_legacy1',
                  ${JSON.stringify(legacyOrder(legacy))}::jsonb)`
        yield* PgMigrator.run({ loader: Migrator.fromRecord(migrations) })
        const [order] = yield* sql<{ url: string; token: string }>`
          SELECT data->>'permalink_url' AS url, permalink_token AS token FROM orders WHERE id = 'ord_legacy1'`
        expect(order!.url).toMatch(/^https:\/\/shop\.example\/order-status\/[0-9A-Za-z]{22}$/)
        expect(order!.token).toBe(permalinkTokenOf(order!.url))
        const [session] = yield* sql<{ url: string }>`
          SELECT internal->'order'->>'permalink_url' AS url FROM checkout_sessions WHERE id = 'cs_legacy1'`
        expect(session!.url).toBe(order!.url)
        const store = yield* Effect.provide(OrderStore, SqlOrderStore)
        const found = yield* store.findOrderByPermalink(order!.token)
        expect(Option.map(found, (stored) => stored.order.id)).toEqual(Option.some("ord_legacy1"))
      }).pipe(Effect.provide(Layer.merge(client, NodeContext.layer)))
    }).pipe(Effect.scoped))
})
