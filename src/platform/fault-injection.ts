/** Where tests crash a request on purpose (`test/support/faults.ts`); production's default does nothing. */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"

export interface FaultInjectionShape {
  /**
   * After a claimed idempotent request's effect (and any answer stored with it) committed, before the key
   * is settled: a defect here settles nothing, as a crash would.
   */
  readonly afterRoute: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<void>
  /** At a named step of a payment (`FaultPoint`): a defect here stops the request there, as a crash would. */
  readonly at: (point: FaultPoint) => Effect.Effect<void>
}

/** Between a provider's call and the recording of its result, where a crash leaves the most to recover. */
export type FaultPoint =
  /** The PaymentIntent was created; its id not recorded yet. */
  | "stripe.after-create"
  /** The PaymentIntent was confirmed; the completion's step 3 not run yet. */
  | "stripe.after-confirm"

export class FaultInjection extends Context.Reference<FaultInjection>()("acp/FaultInjection", {
  defaultValue: (): FaultInjectionShape => ({ afterRoute: () => Effect.void, at: () => Effect.void })
}) {}
