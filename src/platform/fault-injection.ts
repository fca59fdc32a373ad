/**
 * Where tests stop a request's work as a crash would, to prove that a retry after a crash at that
 * point finds the state of one successful request. Production never provides this service: its
 * default does nothing. Tests provide a layer of their own (`test/support/faults.ts`), and the
 * multi-process tests a server entry that kills its process there.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"

export interface FaultInjectionShape {
  /**
   * After the route ran a claimed idempotent request — its effect, and its answer where the use
   * case commits one with it, committed — before the key is settled and the response sent. A
   * defect here ends the request as a crash does: nothing settled, nothing released (the key stays
   * in flight until its lease runs out unless its answer was committed).
   */
  readonly afterRoute: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<void>
}

export class FaultInjection extends Context.Reference<FaultInjection>()("acp/FaultInjection", {
  defaultValue: (): FaultInjectionShape => ({ afterRoute: () => Effect.void })
}) {}
