/**
 * Faults a test arms for the next N requests to a path. Where each one strikes follows what the
 * SDK and the idempotency layer can see:
 * - `500`, `429`, `rate_limit`, `drop-before-processing`: before the endpoint runs, so nothing is
 *   done and nothing is saved under the Idempotency-Key (a retry runs the request).
 * - `delay`: the request waits `ms` with its key claimed, then runs (a second request with the key
 *   meanwhile meets the 409 of a key in use).
 * - `timeout`: the endpoint runs and its answer is saved, but the connection is held unanswered
 *   until the client gives up; `drop-after-processing`: the same, but the socket is destroyed.
 */

export type FaultKind =
  | "500"
  | "429"
  | "rate_limit"
  | "timeout"
  | "delay"
  | "drop-before-processing"
  | "drop-after-processing"

export interface FaultSpec {
  /** An exact path (`/v1/payment_intents`) or a pattern over paths. */
  readonly path: string | RegExp
  readonly method?: "GET" | "POST"
  /** How many matching requests it strikes (default 1). */
  readonly times?: number
  readonly with: FaultKind
  /** For `delay`: how long the request waits before it runs (default 200 ms). */
  readonly ms?: number
}

interface Armed {
  readonly spec: FaultSpec
  left: number
}

export class Faults {
  private armed: Array<Armed> = []

  arm(spec: FaultSpec): void {
    this.armed.push({ spec, left: spec.times ?? 1 })
  }

  /** The fault that strikes this request, if any (each request uses up one strike). */
  take(method: string, path: string): FaultSpec | undefined {
    const found = this.armed.find(({ spec }) =>
      (spec.method === undefined || spec.method === method) &&
      (typeof spec.path === "string" ? spec.path === path : spec.path.test(path))
    )
    if (found === undefined) return undefined
    found.left -= 1
    if (found.left <= 0) this.armed = this.armed.filter((entry) => entry !== found)
    return found.spec
  }

  clear(): void {
    this.armed = []
  }
}
