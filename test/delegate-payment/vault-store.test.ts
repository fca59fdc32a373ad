/**
 * The `VaultStore` contract (with the `IdempotencyStore` whose answers its insert stores) against
 * the three implementations: in memory, SQL over embedded PGlite, and SQL over PostgreSQL (only
 * when `TEST_DATABASE_URL` is set).
 */
import { SqlClient } from "@effect/sql"
import { describe } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlVaultStore } from "../../src/delegate-payment/store/sql-vault-store.ts"
import { SqlIdempotencyStore } from "../../src/idempotency/store/sql-idempotency-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { vaultStoreContract } from "./vault-store.contract.ts"

/** XORs the first ciphertext byte of a token in place (an attacker or a disk error). */
const flipStoredCiphertextByte = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE vault_tokens SET card_ciphertext = set_byte(card_ciphertext, 0, get_byte(card_ciphertext, 0) # 1)
        WHERE id = ${id}`
  )

vaultStoreContract(
  "VaultStore: memory",
  Layer.mergeAll(MemoryVaultStore, MemoryIdempotencyStore).pipe(Layer.provide(freshMemoryDatabase)),
  { multiConnection: false }
)

vaultStoreContract(
  "VaultStore: SQL on embedded PGlite",
  Layer.mergeAll(SqlVaultStore, SqlIdempotencyStore).pipe(Layer.provideMerge(embeddedDatabase())),
  { multiConnection: false, flipStoredCiphertextByte }
)

describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  vaultStoreContract(
    "VaultStore: SQL on PostgreSQL",
    Layer.mergeAll(SqlVaultStore, SqlIdempotencyStore).pipe(Layer.provideMerge(postgresDatabase())),
    { multiConnection: true, flipStoredCiphertextByte }
  )
})
