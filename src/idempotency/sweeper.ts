import { Clock, Duration, Effect, Layer } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { forkBatchSweep } from "../platform/batch-sweep.ts"
import { IdempotencyStore } from "./idempotency-store.ts"

export const IDEMPOTENCY_SWEEP_INTERVAL = Duration.minutes(1)
export const IDEMPOTENCY_SWEEP_BATCH = 500

/** Deletes expired keys in batches every minute, from every process; it only reclaims space (expired is absent). */
export const IdempotencySweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    yield* forkBatchSweep({
      batch: Effect.flatMap(Clock.currentTimeMillis, (now) => store.deleteExpired(now, IDEMPOTENCY_SWEEP_BATCH)),
      batchSize: IDEMPOTENCY_SWEEP_BATCH,
      every: IDEMPOTENCY_SWEEP_INTERVAL,
      logSwept: (count) => `deleted ${count} expired idempotency keys`,
      logFailure: { message: "idempotency key clean-up failed", detail: (error: StorageError) => error.reason }
    })
  })
)
