/**
 * Sessions stored before their documents were JSON text (one `jsonb` document with the internal
 * fields) are split by migration 0020 into the wire form and the internal fields, and read back
 * whole by the store, the wire form answered as it is. Needs TEST_DATABASE_URL.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import {
  atMigrationsBefore,
  freshPostgresDatabaseUrl,
  hasPostgres,
  migratedPostgres
} from "../support/test-database.ts"

/** What a session's wire form holds here (a store checks only an id and a known status). */
const wire = (id: string, status: string) => ({
  id,
  status,
  currency: "usd",
  buyer: { first_name: "Zoë", last_name: "Ørsted", email: "zoe@example.com" },
  line_items: [{ id: "li_1", item: { id: "mug-ceramic", quantity: 2 }, base_amount: 2800, total: 2800 }],
  totals: [{ type: "total", display_text: "Total", amount: 2800 }],
  messages: [],
  links: [],
  expires_at: "2026-11-29T18:00:00.123Z"
})

const legacy = [
  { ...wire("cs_legacy_open", "ready_for_payment"), items: [{ id: "mug-ceramic", quantity: 2 }] },
  {
    ...wire("cs_legacy_done", "completed"),
    items: [{ id: "mug-ceramic", quantity: 2 }],
    order: { id: "ord_1", checkout_session_id: "cs_legacy_done", permalink_url: "https://shop.example/o/1" }
  }
] as const

describe.skipIf(!hasPostgres)("migration 0020: session documents as JSON text", () => {
  it.live("sessions stored as one jsonb document read back whole, their wire form without the internal fields", () =>
    Effect.gen(function*() {
      const url = yield* freshPostgresDatabaseUrl
      yield* atMigrationsBefore(
        url,
        "0020",
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          for (const session of legacy) {
            yield* sql`
            INSERT INTO checkout_sessions (id, status, data, expires_at)
            VALUES (${session.id}, ${session.status}, ${JSON.stringify(session)}::jsonb, ${session.expires_at})`
          }
        })
      )

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* CheckoutStore
        const columns = yield* sql<{ attname: string; type: string; compression: string }>`
          SELECT attname, atttypid::regtype::text AS type, attcompression::text AS compression
          FROM pg_attribute WHERE attrelid = 'checkout_sessions'::regclass AND attname IN ('data', 'internal')
          ORDER BY attname`
        expect(columns.map((column) => [column.attname, column.type])).toEqual([["data", "json"], ["internal", "json"]])
        // Debian's and the official builds of PostgreSQL have LZ4.
        expect(columns[0]!.compression).toBe("l")
        for (const session of legacy) {
          expect(yield* store.sessions.get(session.id)).toEqual(Option.some(session))
          const { items: _items, ...wireForm } = session as typeof session & { order?: unknown }
          const { order: _order, ...withoutOrder } = wireForm as typeof wireForm & { order?: unknown }
          const answered = yield* store.sessions.getJson(session.id)
          expect(Option.map(answered, (read) => JSON.parse(read.json))).toEqual(Option.some(withoutOrder))
          expect(Option.map(answered, (read) => [read.status, read.expires_at])).toEqual(
            Option.some([session.status, session.expires_at])
          )
        }
        const internal = yield* sql<{ id: string; internal: unknown }>`
          SELECT id, internal FROM checkout_sessions ORDER BY id`
        expect(internal).toEqual([
          { id: "cs_legacy_done", internal: { items: legacy[1].items, order: legacy[1].order } },
          { id: "cs_legacy_open", internal: { items: legacy[0].items } }
        ])
      }).pipe(
        Effect.provide(SqlCheckoutStore.pipe(Layer.provideMerge(migratedPostgres(url))))
      )
    }).pipe(Effect.scoped))
})
