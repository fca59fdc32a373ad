/**
 * The `ConsoleSessionStore` contract against the three implementations: in memory, SQL over
 * embedded PGlite, and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe } from "@effect/vitest"
import { Layer } from "effect"
import { SqlConsoleSessionStore } from "../../src/console/store/sql-console-session-store.ts"
import { MemoryConsoleSessionStore } from "../doubles/memory-console-session-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { consoleSessionStoreContract } from "./console-session-store.contract.ts"

consoleSessionStoreContract(
  "ConsoleSessionStore: memory",
  MemoryConsoleSessionStore.pipe(Layer.provide(freshMemoryDatabase))
)

consoleSessionStoreContract(
  "ConsoleSessionStore: SQL on embedded PGlite",
  SqlConsoleSessionStore.pipe(Layer.provide(embeddedDatabase()))
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  consoleSessionStoreContract(
    "ConsoleSessionStore: SQL on PostgreSQL",
    SqlConsoleSessionStore.pipe(Layer.provide(postgresDatabase()))
  )
})
