/**
 * In-memory `VaultStore`, for tests and for running without a database.
 *
 * - Atomic operations: each operation is one synchronous map read or write, which nothing can
 *   interleave on the single JS thread. `markTokenUsed` checks and writes in the same step, so of
 *   concurrent calls for one token exactly one consumes it.
 * - `transaction` takes no lock (so it can be nested inside the memory checkout store's critical
 *   section, or around it, without lock-ordering concerns). It keeps an undo log in a `FiberRef`:
 *   a transaction that fails or is interrupted puts back the tokens it inserted or consumed;
 *   nested transactions behave like savepoints. `lockToken` is a plain read: in memory there is
 *   nothing to lock, the compare-and-set of `markTokenUsed` is what decides.
 * - Records are deep-copied (`structuredClone`) on the way in and out.
 */
import { Effect, Exit, FiberRef, Layer, Option } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { VaultStore, type VaultStoreService, type VaultTokenRecord } from "../../src/delegate/vault-store.ts"

const failure = (message: string) => new StorageError({ reason: "failure", cause: new Error(message) })

export const make: Effect.Effect<VaultStoreService> = Effect.sync(() => {
  const tokens = new Map<string, VaultTokenRecord>()
  /** Undo actions of the innermost running transaction of this fiber, if any. */
  const undoLog = FiberRef.unsafeMake<Array<() => void> | undefined>(undefined)

  /** Runs the synchronous `write` (which returns its undo action, if it changed anything). */
  const write = <A>(f: () => readonly [A, (() => void) | undefined]): Effect.Effect<A> =>
    Effect.flatMap(FiberRef.get(undoLog), (log) =>
      Effect.sync(() => {
        const [result, undo] = f()
        if (undo !== undefined) log?.push(undo)
        return result
      }))

  const transaction: VaultStoreService["transaction"] = (effect) =>
    Effect.flatMap(FiberRef.get(undoLog), (outer) => {
      const log: Array<() => void> = []
      return Effect.locally(effect, undoLog, log).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit)) outer?.push(...log)
            else for (const undo of log.reverse()) undo()
          })
        )
      )
    })

  const insertToken = (record: VaultTokenRecord) =>
    Effect.flatMap(
      write(() => {
        if (tokens.has(record.id)) return [false, undefined] as const
        tokens.set(record.id, structuredClone(record))
        return [true, () => void tokens.delete(record.id)] as const
      }),
      (inserted) => (inserted ? Effect.void : Effect.fail(failure(`duplicate token id ${record.id}`)))
    )

  const getToken = (id: string) =>
    Effect.sync(() => Option.map(Option.fromNullable(tokens.get(id)), (record) => structuredClone(record)))

  const markTokenUsed = (id: string, sessionId: string, at: number) =>
    write(() => {
      const current = tokens.get(id)
      if (current === undefined || current.state !== "active") return [Option.none(), undefined] as const
      const used: VaultTokenRecord = { ...current, state: "used", usedAt: at, usedBySession: sessionId }
      tokens.set(id, used)
      return [Option.some(structuredClone(used)), () => void tokens.set(id, current)] as const
    })

  const releaseToken = (id: string, sessionId: string) =>
    write(() => {
      const current = tokens.get(id)
      if (current === undefined || current.state !== "used" || current.usedBySession !== sessionId) {
        return [false, undefined] as const
      }
      const { usedAt: _at, usedBySession: _by, ...rest } = current
      tokens.set(id, { ...rest, state: "active" })
      return [true, () => void tokens.set(id, current)] as const
    })

  const findTokenIdsByFingerprint = (fingerprint: string, limit: number) =>
    Effect.sync(() =>
      [...tokens.values()]
        .filter((record) => record.fingerprint === fingerprint)
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .slice(0, Math.max(0, Math.floor(limit)))
        .map((record) => record.id)
    )

  return VaultStore.of({
    transaction,
    insertToken,
    getToken,
    lockToken: getToken,
    markTokenUsed,
    releaseToken,
    findTokenIdsByFingerprint
  })
})

/** A fresh, empty in-memory vault store. */
export const MemoryVaultStore: Layer.Layer<VaultStore> = Layer.effect(VaultStore, make)
