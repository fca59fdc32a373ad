/**
 * The `FeedStore` contract against the three implementations: in memory, SQL over embedded PGlite,
 * and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set).
 */
import { describe } from "@effect/vitest"
import { Layer } from "effect"
import { SqlFeedStore } from "../../src/feeds/store/sql-feed-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryFeedStore } from "../doubles/memory-feed-store.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { feedStoreContract } from "./feed-store.contract.ts"

feedStoreContract("FeedStore: memory", MemoryFeedStore.pipe(Layer.provide(freshMemoryDatabase)))

feedStoreContract("FeedStore: SQL on embedded PGlite", SqlFeedStore.pipe(Layer.provide(embeddedDatabase())))

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  feedStoreContract("FeedStore: SQL on PostgreSQL", SqlFeedStore.pipe(Layer.provide(postgresDatabase())))
})
