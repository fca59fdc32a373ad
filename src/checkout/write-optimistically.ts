/**
 * A use case's write, optimistically first (`docs/concurrency.md`, "Fast paths and the locked path"):
 * `decide` names the conditional step that writes its decision; when that writes nothing, `decide`
 * runs again under the locks, where it must write. A refusal is the answer: it was true when read.
 * `known` is decided on first; a refusal on it, or a write that does not hold, goes on from a read.
 */
import { Effect, Either, Option } from "effect"
import { StorageError } from "../db/storage-error.ts"
import { type AnswerToStore, commitWithAnswer, writeWithAnswer } from "../idempotency/idempotent-answer.ts"
import type { CheckoutStoreService, SessionForPayment } from "./checkout-store.ts"

export interface Decided<A> {
  readonly value: A
  /** False, writing nothing, when its snapshot changed. */
  readonly write: (answer: AnswerToStore | undefined) => Effect.Effect<boolean, StorageError>
  /** Kept for the session's next step once the optimistic write committed. */
  readonly keep?: SessionForPayment | undefined
}

export interface Snapshots<S, E, R> {
  readonly known?: S | undefined
  readonly read: Effect.Effect<S, E, R>
  readonly locked: Effect.Effect<S, E, R>
}

const refusedUnderLocks = () =>
  Effect.fail(new StorageError({ reason: "failure", cause: new Error("a conditional write refused under its locks") }))

export const writeOptimistically = <S, A, ES, ED, RS, RD>(
  store: CheckoutStoreService,
  snapshots: Snapshots<S, ES, RS>,
  decide: (snapshot: S) => Effect.Effect<Decided<A>, ED, RD>
): Effect.Effect<A, ES | ED | StorageError, RS | RD> => {
  const written = (decided: Decided<A>) =>
    Effect.map(writeWithAnswer(decided.write, Either.right(decided.value)), (ok) => {
      if (ok && decided.keep !== undefined) store.written.put(decided.keep)
      return ok
    })
  const underLocks = () =>
    commitWithAnswer(
      store.transaction,
      Effect.flatMap(snapshots.locked, (snapshot) =>
        Effect.flatMap(decide(snapshot), (decided) =>
          Effect.flatMap(
            decided.write(undefined),
            (ok) => ok ? Effect.succeed(decided.value) : refusedUnderLocks()
          ))),
      (value) => Option.some(Either.right(value))
    )
  const optimistically = Effect.flatMap(
    snapshots.read,
    (snapshot) =>
      Effect.flatMap(
        decide(snapshot),
        (decided) => Effect.flatMap(written(decided), (ok) => ok ? Effect.succeed(decided.value) : underLocks())
      )
  )
  const { known } = snapshots
  if (known === undefined) return optimistically
  // Only a refusal of `decide` goes on: an error of the write itself is the answer.
  return Effect.flatMap(Effect.either(decide(known)), (decided) =>
    Either.isLeft(decided)
      ? optimistically
      : Effect.flatMap(written(decided.right), (ok) => ok ? Effect.succeed(decided.right.value) : optimistically))
}
