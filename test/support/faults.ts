/**
 * Crashes for tests: a `FaultInjection` layer that, once armed, ends the next claimed idempotent
 * request right after its route ran — its effect committed — and before its key is settled or
 * its response sent, as a process killed there would (a defect: the request answers 500 and
 * nothing after the route runs).
 */
import { Effect, Layer } from "effect"
import { FaultInjection, type FaultPoint } from "../../src/platform/fault-injection.ts"

export interface CrashSwitch {
  /** The next claimed request crashes after its route. */
  readonly arm: Effect.Effect<void>
  /** How many requests crashed. */
  readonly crashes: () => number
  readonly layer: Layer.Layer<FaultInjection>
}

export class SimulatedCrash extends Error {
  constructor() {
    super("simulated crash after the route's commit (test fault injection)")
  }
}

export const makeCrashSwitch = (): CrashSwitch => {
  let armed = false
  let crashes = 0
  return {
    arm: Effect.sync(() => void (armed = true)),
    crashes: () => crashes,
    layer: Layer.succeed(FaultInjection, {
      afterRoute: () =>
        Effect.suspend(() => {
          if (!armed) return Effect.void
          armed = false
          crashes++
          return Effect.die(new SimulatedCrash())
        }),
      at: () => Effect.void
    })
  }
}

export interface PointCrashes {
  /** The next request reaching `point` crashes there. */
  readonly arm: (point: FaultPoint) => Effect.Effect<void>
  readonly crashes: () => ReadonlyArray<FaultPoint>
  readonly layer: Layer.Layer<FaultInjection>
}

/** Crashes at a payment's fault points (`FaultInjection.at`), each armed for one request. */
export const makePointCrashes = (): PointCrashes => {
  const armed = new Set<FaultPoint>()
  const crashes: Array<FaultPoint> = []
  return {
    arm: (point) => Effect.sync(() => void armed.add(point)),
    crashes: () => [...crashes],
    layer: Layer.succeed(FaultInjection, {
      afterRoute: () => Effect.void,
      at: (point) =>
        Effect.suspend(() => {
          if (!armed.delete(point)) return Effect.void
          crashes.push(point)
          return Effect.die(new SimulatedCrash())
        })
    })
  }
}
