/**
 * The port to Stripe: one configured SDK client whose calls fail with `StripeFailure`. It is there
 * whether or not Stripe is configured; `configured` says which, and an unconfigured client refuses
 * every call as misconfigured, so that nothing reaches Stripe without a key.
 */
import { Context, type Effect } from "effect"
import type Stripe from "stripe"
import type { StripeFailure } from "./model/stripe-failure.ts"

export interface StripeClientShape {
  readonly configured: boolean
  /**
   * One SDK call. The SDK retries what may be retried (connection failures, 409 lock timeouts, 429s,
   * 5xx) with backoff and the call's own idempotency key, so a retry never makes a second object.
   */
  readonly call: <A>(name: string, run: (sdk: Stripe) => Promise<A>) => Effect.Effect<A, StripeFailure>
}

export class StripeClient extends Context.Tag("acp/StripeClient")<StripeClient, StripeClientShape>() {}
