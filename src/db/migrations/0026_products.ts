/**
 * Products and their variants (`src/catalog/product-store.ts`); a variant's stock stays the `stock` row
 * of its id. `catalog_version` has one row, bumped by every product write in its transaction: the
 * processes poll it to reload their catalog. The catalog file's products are imported at start.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE products (
      id           text PRIMARY KEY,
      title        text NOT NULL,
      details      jsonb NOT NULL,
      version      integer NOT NULL,
      archived_at  timestamptz,
      created_at   timestamptz NOT NULL,
      updated_at   timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE product_variants (
      id            text PRIMARY KEY,
      product_id    text NOT NULL REFERENCES products (id),
      position      integer NOT NULL,
      title         text,
      unit_amount   integer NOT NULL CHECK (unit_amount >= 0),
      list_amount   integer CHECK (list_amount >= 0),
      availability  text NOT NULL,
      tax_category  text,
      kind          text NOT NULL CHECK (kind IN ('physical', 'digital')),
      details       jsonb NOT NULL,
      archived_at   timestamptz
    )`
  yield* sql`CREATE INDEX product_variants_product ON product_variants (product_id, position)`
  yield* sql`
    CREATE TABLE catalog_version (
      id       smallint PRIMARY KEY CHECK (id = 1),
      version  bigint NOT NULL
    )`
  yield* sql`INSERT INTO catalog_version (id, version) VALUES (1, 0)`
}) satisfies Migration
