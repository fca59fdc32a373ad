/**
 * How a use case writes what it decides, optimistically first (`docs/concurrency.md`): `decide`
 * runs on a snapshot read without locks and names the conditional store step that writes its
 * decision. When that step writes nothing (what was decided on changed), the same `decide` runs
 * again in a transaction on the snapshot read under the locks that keep it from changing, and its
 * step must then write. A refusal of `decide` is the answer: it was true when read.
 *
 * `known`, the snapshot this process wrote last (`CheckoutStoreService.written`), is decided on
 * first, without a read; it may be out of date, so when `decide` refuses on it or its write does
 * not hold, the step goes on from a read as without it. The write is the use case's last: the
 * request's answer is stored with it, in the store step itself when no transaction is needed.
 */
import { Effect, Either, Option } from "effect"
import { StorageError } from "../db/storage-error.ts"
import { type AnswerToStore, commitWithAnswer, writeWithAnswer } from "../idempotency/idempotent-answer.ts"
import type { CheckoutStoreService, SessionForPayment } from "./checkout-store.ts"

/** What `decide` answers: the use case's answer, and the conditional store step that writes it. */
export interface Decided<A> {
  readonly value: A
  /** Writes the decision, with the request's answer when given; false, writing nothing, when its snapshot changed. */
  readonly write: (answer: AnswerToStore | undefined) => Effect.Effect<boolean, StorageError>
  /** The session as written, kept for its next step once an optimistic write of it committed. */
  readonly keep?: SessionForPayment | undefined
}

/** The snapshots a decision is made on: read without locks, under the locks, and `known` (see above). */
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
  // Built only when the optimistic write did not hold (most writes do).
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
  // Only a refusal of `decide` goes on: an error of the write itself is the answer, as above.
  return Effect.flatMap(Effect.either(decide(known)), (decided) =>
    Either.isLeft(decided)
      ? optimistically
      : Effect.flatMap(written(decided.right), (ok) => ok ? Effect.succeed(decided.right.value) : optimistically))
}
