/**
 * The in-memory database every memory store double reads and writes: named tables (maps) with
 * transactions, so that a transaction across stores (the checkout completion writing the order,
 * the vault token held in the payment step) commits or rolls back as one, as on SQL.
 *
 * - One critical section: a `Semaphore(1)` is held for the whole of each outermost transaction,
 *   and for each store call made outside one (so a call never sees a transaction's uncommitted
 *   writes, and is atomic).
 * - Re-entrant: a `FiberRef` marks the fibers running inside a transaction (forked fibers
 *   inherit it); nested transactions and store calls made there run directly, as savepoints.
 * - Rollback: every transaction and savepoint remembers which map each table was; a table is
 *   copied on its first write after that, so what was remembered is never mutated. On failure,
 *   defect or interruption the remembered tables are put back: a failing savepoint undoes only
 *   its own writes.
 * - Rows are replaced, never mutated; the stores copy values on the way in and out.
 *
 * Memory stores share state exactly when they are built on the same `MemoryDatabase`; each
 * `freshMemoryDatabase` build is a new, empty one.
 */
import { Context, Effect, Exit, FiberRef, Layer } from "effect"
import { StorageError } from "../../src/db/storage-error.ts"
import { type AnswerToStore, claimLost } from "../../src/idempotency/idempotent-answer.ts"

/** One table: rows by key. Writes go to the current transaction's copy. */
export interface MemoryTable<K, V> {
  readonly get: (key: K) => V | undefined
  readonly has: (key: K) => boolean
  readonly values: () => IterableIterator<V>
  readonly entries: () => IterableIterator<[K, V]>
  readonly set: (key: K, value: V) => void
  readonly delete: (key: K) => void
}

export interface MemoryDatabaseService {
  /** Runs `effect` atomically; nested calls are savepoints of the outer transaction. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /**
   * One store call: `f` runs atomically (a savepoint inside a transaction, else a transaction of
   * its own), its writes undone if it fails.
   */
  readonly atomic: <A, E>(f: () => Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** A store call that cannot fail: `f` reads and writes synchronously, atomically. */
  readonly sync: <A>(f: () => A) => Effect.Effect<A>
  /** The table `name` (created empty on first use). */
  readonly table: <K, V>(name: string) => MemoryTable<K, V>
}

export class MemoryDatabase extends Context.Tag("test/MemoryDatabase")<MemoryDatabase, MemoryDatabaseService>() {}

/** A failure of the kind the SQL stores report for a violated constraint. */
export const storageFailure = (message: string) => new StorageError({ reason: "failure", cause: new Error(message) })

/** An idempotent answer stored inside a store's atomic step: a lost claim fails it, undoing the step. */
export const storeAnswer = (answer: AnswerToStore | undefined): Effect.Effect<void, StorageError> =>
  answer === undefined
    ? Effect.void
    : Effect.flatMap(answer.complete, (kept) => kept ? Effect.void : Effect.fail(claimLost))

const EMPTY: ReadonlyMap<unknown, unknown> = new Map()

export const makeMemoryDatabase = (): MemoryDatabaseService => {
  /** Table name → rows, as the innermost running transaction sees them. */
  let tables = new Map<string, Map<unknown, unknown>>()
  /** Tables copied since the last savepoint began: not referenced by any savepoint, safe to mutate. */
  const copied = new Set<string>()
  const semaphore = Effect.unsafeMakeSemaphore(1)
  const inTransaction = FiberRef.unsafeMake(false)

  const rowsOf = (name: string): ReadonlyMap<unknown, unknown> => tables.get(name) ?? EMPTY
  const writable = (name: string): Map<unknown, unknown> => {
    if (!copied.has(name)) {
      tables.set(name, new Map(rowsOf(name)))
      copied.add(name)
    }
    return tables.get(name)!
  }

  const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const saved = new Map(tables)
        copied.clear()
        return restore(effect).pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : Effect.sync(() => {
                tables = saved
                copied.clear()
              })
          )
        )
      })
    )

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(
      FiberRef.get(inTransaction),
      (inside) =>
        inside ? savepoint(effect) : semaphore.withPermits(1)(Effect.locally(savepoint(effect), inTransaction, true))
    )

  const atomic = <A, E>(f: () => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    transaction(Effect.suspend(f)) as Effect.Effect<A, E>

  const table = <K, V>(name: string): MemoryTable<K, V> => ({
    get: (key) => rowsOf(name).get(key) as V | undefined,
    has: (key) => rowsOf(name).has(key),
    values: () => rowsOf(name).values() as IterableIterator<V>,
    entries: () => rowsOf(name).entries() as IterableIterator<[K, V]>,
    set: (key, value) => void writable(name).set(key, value),
    delete: (key) => {
      if (rowsOf(name).has(key)) writable(name).delete(key)
    }
  })

  return { transaction, atomic, sync: (f) => atomic(() => Effect.sync(f)), table }
}

/** A new, empty memory database for each build of this layer. */
export const freshMemoryDatabase: Layer.Layer<MemoryDatabase> = Layer.sync(MemoryDatabase, makeMemoryDatabase)
