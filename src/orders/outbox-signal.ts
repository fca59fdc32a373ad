/**
 * Order events queued by this process. The sender's first lane waits on it between idle rounds
 * (`webhook-sender.ts`), so an event goes out as soon as the step that queued it has committed,
 * instead of at the lane's next poll (up to an interval later). Events queued by other processes
 * sharing the database are found by the polls, as before: the signal only shortens a wait.
 */
import { Context, type Duration, Effect, Layer, Queue } from "effect"

export interface OutboxSignalShape {
  /** A step has committed events to send: wakes the waiting lane (never waits itself). */
  readonly queued: Effect.Effect<void>
  /**
   * Returns once `queued` has been signalled since the last return (true), or after `interval`
   * (false).
   */
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
