/**
 * `OrderPayments` for payments made through Stripe: an order's refund to the original payment is a
 * Stripe Refund of the session's PaymentIntent. Its Idempotency-Key is the order's and the request's
 * (`requestReference`: the merchant's Idempotency-Key, hashed), so a retry of the same request replays
 * Stripe's refund, whatever changed on the order meanwhile, and two different requests never share
 * one refund, nor does a refusal Stripe saved under a key block a later refund. Charges of the
 * built-in processor (`ch_…`) moved no money: nothing to refund.
 */
import { Effect, Layer, Option } from "effect"
import { CheckoutStore } from "../checkout/checkout-store.ts"
import {
  OrderPayments,
  type RefundFailure,
  RefundKeyTaken,
  RefundRefused,
  type RefundToMake,
  RefundUnavailable
} from "../orders/order-payments.ts"
import type { StripeFailure } from "./model/stripe-failure.ts"
import { StripeClient } from "./stripe-client.ts"

/** Charges the Stripe provider makes are PaymentIntents. */
export const isPaymentIntentId = (chargeId: string | undefined): chargeId is string =>
  chargeId !== undefined && chargeId.startsWith("pi_")

/** Stripe's Idempotency-Key of a merchant request's refund of an order. */
export const refundIdempotencyKey = (orderId: string, requestReference: string): string =>
  `order-refund:${orderId}:${requestReference}`

export const refundFailure = (orderId: string) => (failure: StripeFailure): Effect.Effect<never, RefundFailure> => {
  switch (failure._tag) {
    case "StripeIdempotencyConflict":
      return Effect.fail(new RefundKeyTaken({ orderId }))
    case "StripeRequestRefused":
      // The key's first request is still running at Stripe (the same request, sent twice at once).
      return failure.code === "idempotency_key_in_use"
        ? Effect.fail(new RefundKeyTaken({ orderId }))
        : Effect.fail(
          new RefundRefused({ code: failure.code ?? "refund_refused", message: failure.message, param: failure.param })
        )
    case "StripeCardError":
      return Effect.fail(
        new RefundRefused({ code: failure.code ?? "refund_refused", message: failure.message, param: undefined })
      )
    case "StripeUnavailable":
      return Effect.fail(new RefundUnavailable({ retryAfterSeconds: failure.retryAfterSeconds }))
    case "StripeMisconfigured":
      return Effect.zipRight(
        Effect.logError(
          failure.statusCode === undefined
            ? `refund of order ${orderId}: a Stripe payment, but Stripe is not configured (STRIPE_SECRET_KEY)`
            : `refund of order ${orderId}: Stripe refused the account's key (${failure.statusCode})`
        ),
        Effect.fail(new RefundUnavailable({ retryAfterSeconds: undefined }))
      )
  }
}

export const StripeOrderPayments = Layer.effect(
  OrderPayments,
  Effect.gen(function*() {
    const stripe = yield* StripeClient
    const checkout = yield* CheckoutStore
    const refundOriginalPayment = Effect.fnUntraced(function*(refund: RefundToMake) {
      const paid = yield* checkout.readSessionForPayment(refund.checkoutSessionId)
      const attempt = Option.getOrUndefined(Option.flatMap(paid, (found) => found.latestAttempt))
      const chargeId = attempt?.state === "succeeded" ? attempt.chargeId : undefined
      if (!isPaymentIntentId(chargeId)) return Option.none()
      const made = yield* stripe.call("refunds.create", (sdk) =>
        sdk.refunds.create({
          payment_intent: chargeId,
          amount: refund.amount,
          metadata: {
            order_id: refund.orderId,
            adjustment_id: refund.adjustmentId,
            request_reference: refund.requestReference
          }
        }, { idempotencyKey: refundIdempotencyKey(refund.orderId, refund.requestReference) })).pipe(
          Effect.catchAll(refundFailure(refund.orderId))
        )
      // A refund Stripe says failed moved nothing (cards refund at once; other methods may end so).
      if (made.status === "failed" || made.status === "canceled") {
        return yield* new RefundRefused({
          code: `refund_${made.status}`,
          message: `Stripe's refund ${made.id} is ${made.status}.`,
          param: undefined
        })
      }
      yield* Effect.logInfo(`order ${refund.orderId}: Stripe refund ${made.id} of ${made.amount} (${chargeId})`)
      return Option.some({ reference: made.id })
    })
    return OrderPayments.of({ refundOriginalPayment })
  })
)
