/** The `StripeClient` on the official SDK, pointed at `STRIPE_API_BASE` with the account's secret key. */
import { Effect, Layer, Option, Redacted } from "effect"
import Stripe from "stripe"
import { AppConfig } from "../../platform/config.ts"
import { classifyStripeError, StripeMisconfigured } from "../model/stripe-failure.ts"
import { StripeClient } from "../stripe-client.ts"

/** Retries of a failed request the SDK makes, with its backoff, before the call fails as unavailable. */
export const STRIPE_NETWORK_RETRIES = 2
/** Per request: well under the grace before a pending payment is settled (`PENDING_PAYMENT_GRACE_MILLIS`). */
export const STRIPE_TIMEOUT_MILLIS = 20_000

/**
 * Stripe's plain rate limit, which the SDK does not retry itself; a 429 with `Stripe-Should-Retry: true`
 * (a lock timeout) the SDK has already retried, and retrying it again would multiply its tries.
 */
const isRateLimit = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const { headers, type } = error as { readonly type?: unknown; readonly headers?: Record<string, unknown> }
  return type === "StripeRateLimitError" && headers?.["stripe-should-retry"] !== "true"
}

/** The SDK's backoff for its own retries: half a second, doubling, with jitter. */
const backoffMillis = (retry: number) => 500 * 2 ** retry * (0.5 + Math.random() / 2)

/**
 * Runs `attempt`, retrying a rate limit `STRIPE_NETWORK_RETRIES` times with backoff; the request is the
 * same, Idempotency-Key included, so a retry never makes a second object. Real timers: the backoff is
 * the SDK's kind of wait, not the application's clock.
 */
const retryingRateLimits = async <A>(attempt: () => Promise<A>): Promise<A> => {
  for (let retry = 0;; retry++) {
    try {
      return await attempt()
    } catch (error) {
      if (retry >= STRIPE_NETWORK_RETRIES || !isRateLimit(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, backoffMillis(retry)))
    }
  }
}

/** `timeoutMillis` for tests of a Stripe that does not answer; the service runs with `SdkStripeClient`. */
export const makeSdkStripeClient = (
  options: { readonly timeoutMillis: number } = { timeoutMillis: STRIPE_TIMEOUT_MILLIS }
) =>
  Layer.effect(
    StripeClient,
    Effect.map(AppConfig, ({ stripe }) => {
      if (Option.isNone(stripe.secretKey)) {
        return {
          configured: false,
          call: () => Effect.fail(new StripeMisconfigured({ statusCode: undefined }))
        }
      }
      const sdk = new Stripe(Redacted.value(stripe.secretKey.value), {
        host: stripe.apiBase.host,
        port: stripe.apiBase.port,
        protocol: stripe.apiBase.protocol,
        maxNetworkRetries: STRIPE_NETWORK_RETRIES,
        timeout: options.timeoutMillis,
        telemetry: false,
        appInfo: { name: "agentic-checkout" }
      })
      return {
        configured: true,
        call: <A>(name: string, run: (client: Stripe) => Promise<A>) =>
          Effect.tryPromise({ try: () => retryingRateLimits(() => run(sdk)), catch: classifyStripeError }).pipe(
            Effect.withLogSpan(`stripe.${name}`)
          )
      }
    })
  )

export const SdkStripeClient = makeSdkStripeClient()
