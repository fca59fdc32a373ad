/**
 * A piece of in-memory state with transactions, for the memory stores: one critical section
 * (`Semaphore(1)`) per outermost transaction and per plain call made outside one; re-entrant
 * through a `FiberRef`; rollback on failure or interruption (nested transactions behave like
 * savepoints). The state is replaced, never mutated: `update` installs a new value.
 */
import { Effect, Exit, FiberRef } from "effect"
import type { StorageError } from "../../src/db/storage-error.ts"

export interface MemoryState<S> {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** Runs `f` atomically (directly inside a transaction, else under the lock). */
  readonly atomic: <A, E>(f: () => Effect.Effect<A, E>) => Effect.Effect<A, E>
  readonly read: <A>(f: (state: S) => A) => Effect.Effect<A, StorageError>
  readonly get: () => S
  readonly set: (state: S) => void
}

export const makeMemoryState = <S>(initial: S): MemoryState<S> => {
  let state = initial
  const semaphore = Effect.unsafeMakeSemaphore(1)
  const inTransaction = FiberRef.unsafeMake(false)

  const atomic = <A, E>(f: () => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) =>
      inside ? Effect.suspend(f) : semaphore.withPermits(1)(Effect.suspend(f)))

  const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const saved = state
        return restore(effect).pipe(
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => void (state = saved))))
        )
      })
    )

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) =>
      inside ? savepoint(effect) : semaphore.withPermits(1)(Effect.locally(savepoint(effect), inTransaction, true)))

  return {
    transaction,
    atomic,
    read: (f) => atomic(() => Effect.sync(() => f(state))),
    get: () => state,
    set: (next) => {
      state = next
    }
  }
}
