/**
 * Order events queued by this process: the sender's first lane waits on it between idle rounds, so an
 * event goes out once its step commits. Other processes' events are found by the polls.
 */
import { Context, type Duration, Effect, Layer, Queue } from "effect"

export interface OutboxSignalShape {
  /** A step has committed events to send: wakes the waiting lane (never waits itself). */
  readonly queued: Effect.Effect<void>
  /** True once `queued` was signalled since the last return, false after `interval`. */
  readonly waitForEvents: (interval: Duration.DurationInput) => Effect.Effect<boolean>
}

export class OutboxSignal extends Context.Tag("acp/OutboxSignal")<OutboxSignal, OutboxSignalShape>() {}

/** Signals coalesce: any number of them while the lane is busy wake it once. */
export const OutboxSignalLive = Layer.effect(
  OutboxSignal,
  Effect.map(Queue.sliding<void>(1), (pending) =>
    OutboxSignal.of({
      queued: Effect.asVoid(Queue.offer(pending, undefined)),
      waitForEvents: (interval) =>
        Effect.raceFirst(Effect.as(Queue.take(pending), true), Effect.as(Effect.sleep(interval), false))
    }))
)
