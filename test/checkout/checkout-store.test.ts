/**
 * The `CheckoutStore` contract (with the `OrderStore` its completions write to, and the
 * `IdempotencyStore` whose answers its create stores) against the three
 * implementations: in memory, SQL over embedded
 * PGlite, and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe } from "@effect/vitest"
import { Layer } from "effect"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { SqlIdempotencyStore } from "../../src/idempotency/store/sql-idempotency-store.ts"
import { SqlOrderStore } from "../../src/orders/store/sql-order-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import { MemoryOrderStore } from "../doubles/memory-order-store.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { checkoutStoreContract } from "./checkout-store.contract.ts"

checkoutStoreContract(
  "CheckoutStore: memory",
  Layer.mergeAll(MemoryCheckoutStore, MemoryOrderStore, MemoryIdempotencyStore).pipe(
    Layer.provide(freshMemoryDatabase)
  ),
  { multiConnection: false }
)

checkoutStoreContract(
  "CheckoutStore: SQL on embedded PGlite",
  Layer.mergeAll(SqlCheckoutStore, SqlOrderStore, SqlIdempotencyStore).pipe(Layer.provide(embeddedDatabase())),
  { multiConnection: false }
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  checkoutStoreContract(
    "CheckoutStore: SQL on PostgreSQL",
    Layer.mergeAll(SqlCheckoutStore, SqlOrderStore, SqlIdempotencyStore).pipe(Layer.provide(postgresDatabase())),
    { multiConnection: true }
  )
})
