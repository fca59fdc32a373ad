/**
 * The `PaymentProvider` the application runs with: each credential charged by the provider its
 * payment handler names (`model/stripe-route.ts`) — Stripe, or the built-in vault and processor,
 * which stay the default — and each pending attempt settled by the provider that charged it.
 */
import { Effect, Layer } from "effect"
import { PaymentProvider, type PaymentProviderService } from "../payments/payment-provider.ts"
import { attemptChargedByStripe, chargedByStripe, STRIPE_PSP } from "./model/stripe-route.ts"
import { StripePayments } from "./stripe-payment-provider.ts"

/** Needs the built-in provider as `PaymentProvider` (provided below it) and `StripePayments`. */
export const PaymentRouter = Layer.effect(
  PaymentProvider,
  Effect.gen(function*() {
    const builtIn = yield* PaymentProvider
    const stripe = yield* StripePayments
    const by = (credential: Parameters<typeof chargedByStripe>[0]) => chargedByStripe(credential) ? stripe : builtIn
    return {
      // The intervention is offered for the handlers whose provider carries it out.
      threeDSecure: builtIn.threeDSecure,
      handlerSupport: (handler) =>
        handler.psp !== STRIPE_PSP
          ? { offered: true, threeDSecure: builtIn.threeDSecure }
          : stripe.configured
          ? { offered: true, threeDSecure: stripe.threeDSecure }
          : { offered: false, needs: "STRIPE_SECRET_KEY" },
      authorize: (request) => by(request.credential).authorize(request),
      charge: (request) => by(request.credential).charge(request),
      release: (request) => by(request.credential).release(request),
      settleCharge: (attempt) =>
        attemptChargedByStripe(attempt.credentialRef) ? stripe.settleCharge(attempt) : builtIn.settleCharge(attempt)
    } satisfies PaymentProviderService
  })
)
