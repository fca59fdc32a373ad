/** Background clean-up in batches: a sweep ends at a short batch, so no transaction holds more than one. */
import { type Duration, Effect, Schedule, type Scope } from "effect"

export const sweepInBatches = Effect.fnUntraced(function*<E, R>(
  batch: Effect.Effect<number, E, R>,
  batchSize: number
): Effect.fn.Return<number, E, R> {
  let total = 0
  for (;;) {
    const count = yield* batch
    total += count
    if (count < batchSize) return total
  }
})

export interface BatchSweep<E, R> {
  /** At most `batchSize` items, answering how many; with several processes, it skips locked rows. */
  readonly batch: Effect.Effect<number, E, R>
  readonly batchSize: number
  /** The pause between sweeps; the first runs at once. */
  readonly every: Duration.DurationInput
  readonly logSwept?: (count: number) => string
  readonly logFailure: { readonly message: string; readonly detail: (error: E) => unknown }
}

export const forkBatchSweep = <E, R>(sweep: BatchSweep<E, R>): Effect.Effect<void, never, R | Scope.Scope> =>
  sweepInBatches(sweep.batch, sweep.batchSize).pipe(
    Effect.tap((count) =>
      count > 0 && sweep.logSwept !== undefined ? Effect.logInfo(sweep.logSwept(count)) : Effect.void
    ),
    Effect.catchAll((error) => Effect.logWarning(sweep.logFailure.message, sweep.logFailure.detail(error))),
    Effect.repeat(Schedule.spaced(sweep.every)),
    Effect.forkScoped,
    Effect.asVoid
  )
