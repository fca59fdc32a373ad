/**
 * In-memory `VaultStore`, for tests: the `vault_tokens` table of a `MemoryDatabase`, whose
 * transactions it uses (a token consumed in a checkout transaction that fails is given back with
 * the rest). `markTokenUsed` checks and writes in one atomic call, so of concurrent calls for one
 * token exactly one consumes it; `lockToken` is a plain read (the database's critical section is
 * the lock). Records are deep-copied on the way in and out.
 */
import { Effect, Layer, Option } from "effect"
import { VaultStore, type VaultStoreService, type VaultTokenRecord } from "../../src/delegate-payment/vault-store.ts"
import { MemoryDatabase, storageFailure, storeAnswer } from "./memory-database.ts"

export const make: Effect.Effect<VaultStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const tokens = db.table<string, VaultTokenRecord>("vault_tokens")

  const insertToken: VaultStoreService["insertToken"] = (record, answer) =>
    db.atomic(() => {
      if (tokens.has(record.id)) return Effect.fail(storageFailure(`duplicate token id ${record.id}`))
      tokens.set(record.id, structuredClone(record))
      return storeAnswer(answer)
    })

  const getToken = (id: string) =>
    db.sync(() => Option.map(Option.fromNullable(tokens.get(id)), (record) => structuredClone(record)))

  const markTokenUsed = (id: string, sessionId: string, at: number) =>
    db.sync(() => {
      const current = tokens.get(id)
      if (
        current === undefined || current.state !== "active" || current.allowance.checkout_session_id !== sessionId
      ) return Option.none<VaultTokenRecord>()
      const used: VaultTokenRecord = { ...current, state: "used", usedAt: at, usedBySession: sessionId }
      tokens.set(id, used)
      return Option.some(structuredClone(used))
    })

  const releaseToken = (id: string, sessionId: string) =>
    db.sync(() => {
      const current = tokens.get(id)
      if (current === undefined || current.state !== "used" || current.usedBySession !== sessionId) return false
      const { usedAt: _at, usedBySession: _by, ...rest } = current
      tokens.set(id, { ...rest, state: "active" })
      return true
    })

  const findTokenIdsByFingerprint = (fingerprint: string, limit: number) =>
    db.sync(() =>
      [...tokens.values()]
        .filter((record) => record.fingerprint === fingerprint)
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .slice(0, Math.max(0, Math.floor(limit)))
        .map((record) => record.id)
    )

  return VaultStore.of({
    transaction: db.transaction,
    insertToken,
    getToken,
    lockToken: getToken,
    markTokenUsed,
    releaseToken,
    findTokenIdsByFingerprint
  })
})

/** The memory vault store on the `MemoryDatabase` in context. */
export const MemoryVaultStore: Layer.Layer<VaultStore, never, MemoryDatabase> = Layer.effect(VaultStore, make)
