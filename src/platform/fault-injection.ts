/** Where tests crash a request on purpose (`test/support/faults.ts`); production's default does nothing. */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"

export interface FaultInjectionShape {
  /**
   * After a claimed idempotent request's effect (and any answer stored with it) committed, before the key
   * is settled: a defect here settles nothing, as a crash would.
   */
  readonly afterRoute: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<void>
}

export class FaultInjection extends Context.Reference<FaultInjection>()("acp/FaultInjection", {
  defaultValue: (): FaultInjectionShape => ({ afterRoute: () => Effect.void })
}) {}
