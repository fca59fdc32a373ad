/**
 * The `IdempotencyStore` contract against the three implementations: in memory, SQL over embedded
 * PGlite, and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe } from "@effect/vitest"
import { Layer } from "effect"
import { SqlIdempotencyStore } from "../../src/idempotency/store/sql-idempotency-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { idempotencyStoreContract } from "./idempotency-store.contract.ts"

idempotencyStoreContract("IdempotencyStore: memory", MemoryIdempotencyStore.pipe(Layer.provide(freshMemoryDatabase)), {
  multiConnection: false
})

idempotencyStoreContract(
  "IdempotencyStore: SQL on embedded PGlite",
  SqlIdempotencyStore.pipe(Layer.provide(embeddedDatabase())),
  { multiConnection: false }
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  idempotencyStoreContract(
    "IdempotencyStore: SQL on PostgreSQL",
    SqlIdempotencyStore.pipe(Layer.provide(postgresDatabase())),
    { multiConnection: true }
  )
})
