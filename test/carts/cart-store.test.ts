/**
 * The `CartStore` contract against the three implementations: in memory, SQL over embedded PGlite,
 * and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe } from "@effect/vitest"
import { Layer } from "effect"
import { SqlCartStore } from "../../src/carts/store/sql-cart-store.ts"
import { MemoryCartStore } from "../doubles/memory-cart-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { cartStoreContract } from "./cart-store.contract.ts"

cartStoreContract("CartStore: memory", MemoryCartStore.pipe(Layer.provide(freshMemoryDatabase)))

cartStoreContract("CartStore: SQL on embedded PGlite", SqlCartStore.pipe(Layer.provide(embeddedDatabase())))

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  cartStoreContract("CartStore: SQL on PostgreSQL", SqlCartStore.pipe(Layer.provide(postgresDatabase())))
})
