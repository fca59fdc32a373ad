/**
 * The `CheckoutStore` contract against the three implementations: in memory, SQL over embedded
 * PGlite, and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe } from "@effect/vitest"
import { Layer } from "effect"
import { MemoryCheckoutStore } from "../../src/storage/memory-checkout-store.ts"
import { SqlCheckoutStore } from "../../src/storage/sql-checkout-store.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { checkoutStoreContract } from "./checkout-store.contract.ts"

checkoutStoreContract("CheckoutStore: memory", MemoryCheckoutStore, { multiConnection: false })

checkoutStoreContract(
  "CheckoutStore: SQL on embedded PGlite",
  SqlCheckoutStore.pipe(Layer.provide(embeddedDatabase())),
  { multiConnection: false }
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  checkoutStoreContract(
    "CheckoutStore: SQL on PostgreSQL",
    SqlCheckoutStore.pipe(Layer.provide(postgresDatabase())),
    { multiConnection: true }
  )
})
