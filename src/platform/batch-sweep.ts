/**
 * Background clean-up in batches (expired sessions, idempotency keys, rate-limit buckets): a sweep
 * runs one batch after another until a batch comes back short, so no transaction holds more than
 * a batch of rows; sweeps repeat on a schedule. Safe with several processes when a batch skips
 * rows another process holds (`FOR UPDATE SKIP LOCKED`).
 */
import { type Duration, Effect, Schedule, type Scope } from "effect"

/** Runs `batch` (handling at most `batchSize` items, answering how many) until it handles fewer; the total. */
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
  /** One batch: handles at most `batchSize` items and answers how many. */
  readonly batch: Effect.Effect<number, E, R>
  readonly batchSize: number
  /** The pause between the end of a sweep and the start of the next (the first runs at once). */
  readonly every: Duration.DurationInput
  /** The info line of a sweep that handled `count` > 0 items; none when absent. */
  readonly logSwept?: (count: number) => string
  /** The warning of a failed sweep (the next sweep runs as planned). */
  readonly logFailure: { readonly message: string; readonly detail: (error: E) => unknown }
}

/** Sweeps now and then every `every`, in a fiber of the current scope. */
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
