/**
 * What the application has stored, for tests asserting that a refused request changed nothing:
 * every table of the memory stores (`test/doubles`) except the idempotency keys, where a 4xx
 * answer to a keyed request is kept for replay by design.
 */
import { Effect, Layer } from "effect"
import { freshMemoryDatabase, MemoryDatabase } from "../doubles/memory-database.ts"
import { testApp, type TestAppOptions } from "./http.ts"

const TABLES = [
  "checkout_sessions",
  "console_sessions",
  "counters",
  "coupon_holds",
  "coupons",
  "orders",
  "payment_attempts",
  "processor_charges",
  "received_event_hashes",
  "received_events",
  "received_orders",
  "reservations",
  "stock",
  "vault_tokens",
  "webhook_outbox"
] as const

/** The application on memory stores, with their database (the same one) to look into. */
export const testAppWithMemory = (options: TestAppOptions = {}) => Layer.merge(testApp(options), freshMemoryDatabase)

/** Every row of every table, by table; rows are replaced, never mutated, so this is a snapshot. */
export const memoryState = Effect.map(
  MemoryDatabase,
  (db) => Object.fromEntries(TABLES.map((name) => [name, [...db.table(name).entries()]]))
)

/** How many rows `table` has. */
export const rowCount = (table: (typeof TABLES)[number]) =>
  Effect.map(MemoryDatabase, (db) => [...db.table(table).values()].length)
