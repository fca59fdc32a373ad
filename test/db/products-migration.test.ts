/**
 * Migration 0026 on a database of today's data: created by the migrations before it, with stock of
 * its own. The server's next start adds the products tables and imports the file's products; the
 * stock the database had is kept, every item id still sells. Needs TEST_DATABASE_URL.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { migrations } from "../../src/db/migrations/index.ts"
import { callServer, startServer } from "../support/server-process.ts"
import { freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0026"))

describe.skipIf(!hasPostgres)("migration 0026: products", () => {
  it.live(
    "a database with stock from before: the file's products imported, its stock kept",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const client = Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }), Reactivity.layer)
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* PgMigrator.run({ loader: Migrator.fromRecord(before) })
          // What a server of the old version left: the mug's stock sold down to 7.
          yield* sql`INSERT INTO stock (product_id, on_hand, reserved) VALUES ('mug-ceramic', 7, 0)`
        }).pipe(Effect.provide(Layer.merge(client, NodeContext.layer)))

        const server = yield* startServer({ DATABASE_URL: url })
        const mug = yield* callServer(server, "GET", "/products/mug-ceramic")
        expect(mug.status).toBe(200)
        expect(mug.body.variants).toHaveLength(1)
        expect(mug.body.variants[0]).toMatchObject({
          id: "mug-ceramic",
          unit_amount: 1400,
          stock: { on_hand: 7, reserved: 0, available: 7 }
        })
        const shirt = yield* callServer(server, "GET", "/products/tshirt-classic")
        expect(shirt.body.variants[0].stock.on_hand).toBe(100)
        const tooMany = yield* callServer(server, "POST", "/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 8 }]
        })
        expect(tooMany.status).toBe(422)
        const fits = yield* callServer(server, "POST", "/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 7 }]
        })
        expect(fits.status).toBe(201)
        expect(fits.body.line_items[0].base_amount).toBe(9800)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})
