/** Renews the leases of this process's idempotency claims while their requests run (`docs/concurrency.md`). */
import { Clock, Duration, Effect, type Scope } from "effect"
import type { IdempotencyScope, IdempotencyStoreService } from "./idempotency-store.ts"

export interface ClaimRenewal {
  /** Runs `effect` with the lease of claim `claimId` on `scope` renewed until it ends. */
  readonly whileRunning: <A, E, R>(
    scope: IdempotencyScope,
    claimId: string,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}

export const startClaimRenewal = Effect.fnUntraced(function*(
  store: IdempotencyStoreService,
  timing: { readonly leaseMillis: number; readonly renewEveryMillis: number }
): Effect.fn.Return<ClaimRenewal, never, Scope.Scope> {
  const lifetime = yield* Effect.scope
  const running = new Map<string, IdempotencyScope>()
  const renewOne = (claimId: string, scope: IdempotencyScope, leaseUntil: number) =>
    store.renewLease(scope, claimId, leaseUntil).pipe(
      Effect.catchAll((error) => Effect.logWarning("idempotency lease renewal failed", error.reason))
    )
  const round = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(
      [...running],
      ([claimId, scope]) => renewOne(claimId, scope, now + timing.leaseMillis),
      { concurrency: 16, discard: true }
    ))
  const every = Duration.millis(timing.renewEveryMillis)
  // One loop per process, ended by a round that finds no claim and started again by the next: no idle timer.
  let looping = false
  const loop: Effect.Effect<void> = Effect.zipRight(
    Effect.sleep(every),
    Effect.suspend(() => {
      if (running.size === 0) {
        looping = false
        return Effect.void
      }
      return Effect.zipRight(round, loop)
    })
  )
  // Interruptible (a fork inherits the request's uninterruptible region), so the scope's end stops it.
  const start = Effect.suspend(() => {
    if (looping) return Effect.void
    looping = true
    // A defect ends this loop but not renewal: the next claim starts another.
    const guarded = Effect.catchAllDefect(loop, (defect) =>
      Effect.zipRight(
        Effect.sync(() => {
          looping = false
        }),
        Effect.logError("idempotency lease renewal stopped", defect)
      ))
    return Effect.asVoid(Effect.forkIn(Effect.interruptible(guarded), lifetime))
  })
  return {
    whileRunning: (scope, claimId, effect) =>
      Effect.zipRight(
        start,
        // Registered inside what `ensuring` guards: however the effect ends, the claim leaves.
        Effect.ensuring(
          Effect.zipRight(Effect.sync(() => running.set(claimId, scope)), effect),
          Effect.sync(() => running.delete(claimId))
        )
      )
  }
})
