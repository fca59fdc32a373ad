/**
 * Carts (`src/carts/cart-store.ts`): the items and buyer as sent, the random hand-off token of the
 * buyer page (as an order permalink's: 131 random bits), how many checkouts that page started.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE carts (
      id             text PRIMARY KEY,
      items          text NOT NULL,
      buyer          text,
      locale         text,
      handoff_token   text NOT NULL UNIQUE,
      checkouts      integer NOT NULL DEFAULT 0,
      created_at     timestamptz NOT NULL,
      updated_at     timestamptz NOT NULL,
      expires_at     timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX carts_expires_at ON carts (expires_at)`
}) satisfies Migration
