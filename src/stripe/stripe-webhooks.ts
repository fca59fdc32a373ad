/**
 * What a verified Stripe event changes. First, outside any transaction, what Stripe must be asked
 * (the PaymentIntent naming the session, every refund of it); then one transaction records the event
 * and makes its change, so a redelivery is a no-op and a failed change is retried by Stripe's next
 * delivery. Order changes go through `OrderService.reconcile`, which queues `order_update` only when
 * the order changes, and is idempotent by the provider's references: a refund our API recorded, or
 * is recording at the same moment, is recorded once.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type Stripe from "stripe"
import { CheckoutService } from "../checkout/checkout-service.ts"
import { CheckoutStore } from "../checkout/checkout-store.ts"
import type { StorageError } from "../db/storage-error.ts"
import { type DisputeOutcome, OrderCommand, type PaymentRefund } from "../orders/model/order-state-machine.ts"
import { OrderEvents, OrderService, type ReconcileCommand } from "../orders/order-service.ts"
import { OrderStore } from "../orders/order-store.ts"
import type { StripeFailure } from "./model/stripe-failure.ts"
import { isPaymentIntentId } from "./order-refunds.ts"
import { StripeClient } from "./stripe-client.ts"
import { StripeEventsStore } from "./stripe-events-store.ts"

/** The event types that change something; every other one is recorded and acknowledged. */
export const HANDLED_EVENT_TYPES = [
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.closed",
  "payment_intent.succeeded",
  "payment_intent.payment_failed"
] as const

export type StripeEventOutcome = "applied" | "replayed"

export interface StripeWebhooksShape {
  readonly receive: (event: Stripe.Event) => Effect.Effect<StripeEventOutcome, StripeFailure | StorageError>
}

export class StripeWebhooks extends Context.Tag("acp/StripeWebhooks")<StripeWebhooks, StripeWebhooksShape>() {}

/** A change to make in the event's transaction, and what it is, for the record. */
interface Plan {
  readonly outcome: string
  readonly apply: Effect.Effect<void, StorageError>
}

const nothing = (outcome: string): Plan => ({ outcome, apply: Effect.void })

const idOf = (value: string | { readonly id: string } | null | undefined): string | undefined =>
  typeof value === "string" ? value : value?.id

/** Stripe's dispute status as the order's outcome: lost gives the buyer the money back, won nothing. */
const disputeOutcome = (status: string): DisputeOutcome =>
  status === "lost" ? "lost" : status === "won" || status === "warning_closed" ? "won" : "open"

export const StripeWebhooksLive = Layer.effect(
  StripeWebhooks,
  Effect.gen(function*() {
    const stripe = yield* StripeClient
    const events = yield* StripeEventsStore
    const orders = yield* OrderService
    const orderEvents = yield* OrderEvents
    const orderStore = yield* OrderStore
    const checkoutStore = yield* CheckoutStore
    const checkout = yield* CheckoutService

    /** The order of the session a PaymentIntent paid, if the session's succeeded payment is that PaymentIntent. */
    const orderPaidBy = Effect.fnUntraced(function*(paymentIntentId: string) {
      const intent = yield* stripe.call(
        "paymentIntents.retrieve",
        (sdk) => sdk.paymentIntents.retrieve(paymentIntentId)
      )
      const sessionId = intent.metadata?.checkout_session_id
      if (sessionId === undefined || sessionId === "") return Option.none<string>()
      const paid = yield* checkoutStore.readSessionForPayment(sessionId)
      const attempt = Option.getOrUndefined(Option.flatMap(paid, (found) => found.latestAttempt))
      if (attempt?.state !== "succeeded" || attempt.chargeId !== paymentIntentId) return Option.none<string>()
      const found = yield* orderStore.listOrders({ search: sessionId, limit: 10 })
      return Option.fromNullable(found.find((stored) => stored.order.checkout_session_id === sessionId)?.order.id)
    })

    const reconcile = (orderId: string, command: ReconcileCommand, outcome: string): Plan => ({
      outcome,
      // An order removed since (never, today) leaves nothing to change.
      apply: orders.reconcile(orderId, command).pipe(Effect.catchTag("OrderNotFound", () => Effect.void), Effect.asVoid)
    })

    /** Every succeeded refund of the PaymentIntent, oldest first; ours carry their request in the metadata. */
    const refundsOf = Effect.fnUntraced(function*(paymentIntentId: string, orderId: string) {
      const listed = yield* stripe.call(
        "refunds.list",
        (sdk) => sdk.refunds.list({ payment_intent: paymentIntentId, limit: 100 }).autoPagingToArray({ limit: 10_000 })
      )
      return [...listed].reverse().flatMap((refund): ReadonlyArray<PaymentRefund> => {
        if (refund.status !== "succeeded") return []
        const ours = refund.metadata?.order_id === orderId ? refund.metadata.request_reference : undefined
        return [{
          reference: refund.id,
          amount: refund.amount,
          ...(ours !== undefined && ours !== "" ? { request_reference: ours } : {})
        }]
      })
    })

    const planFor = Effect.fnUntraced(
      function*(event: Stripe.Event): Effect.fn.Return<Plan, StripeFailure | StorageError> {
        switch (event.type) {
          case "charge.refunded": {
            const charge = event.data.object
            const intentId = idOf(charge.payment_intent)
            if (!isPaymentIntentId(intentId)) return nothing("no PaymentIntent")
            const orderId = yield* orderPaidBy(intentId)
            if (Option.isNone(orderId)) return nothing(`no order paid by ${intentId}`)
            const refunds = yield* refundsOf(intentId, orderId.value)
            return reconcile(
              orderId.value,
              OrderCommand.RecordPaymentRefunds({ refunds }),
              `refunds of ${intentId} on ${orderId.value}`
            )
          }
          case "charge.dispute.created":
          case "charge.dispute.closed": {
            const dispute = event.data.object
            let intentId = idOf(dispute.payment_intent)
            if (intentId === undefined) {
              const chargeId = idOf(dispute.charge)
              if (chargeId === undefined) return nothing("no charge")
              const charge = yield* stripe.call("charges.retrieve", (sdk) => sdk.charges.retrieve(chargeId))
              intentId = idOf(charge.payment_intent)
            }
            if (!isPaymentIntentId(intentId)) return nothing("no PaymentIntent")
            const orderId = yield* orderPaidBy(intentId)
            if (Option.isNone(orderId)) return nothing(`no order paid by ${intentId}`)
            return reconcile(
              orderId.value,
              OrderCommand.RecordDispute({
                reference: dispute.id,
                amount: dispute.amount,
                reason: dispute.reason,
                outcome: disputeOutcome(dispute.status)
              }),
              `dispute ${dispute.id} (${dispute.status}) on ${orderId.value}`
            )
          }
          case "payment_intent.succeeded":
          case "payment_intent.payment_failed": {
            const sessionId = event.data.object.metadata?.checkout_session_id
            if (sessionId === undefined || sessionId === "") return nothing("no checkout session")
            // Settled only from what the provider says of the session's pending attempt; none: nothing.
            return { outcome: `settlement of ${sessionId}`, apply: Effect.asVoid(checkout.settlePayment(sessionId)) }
          }
          default:
            return nothing("ignored")
        }
      }
    )

    const receive: StripeWebhooksShape["receive"] = Effect.fnUntraced(function*(event) {
      // A redelivery of a recorded event asks Stripe nothing (the record below still decides).
      if (yield* events.has(event.id)) {
        yield* Effect.logInfo(`Stripe event ${event.id} (${event.type}): replayed`)
        return "replayed" as const
      }
      const plan = yield* planFor(event)
      const receivedAt = yield* Clock.currentTimeMillis
      const objectId = idOf(event.data.object as { readonly id: string } | undefined)
      const outcome = yield* events.transaction(Effect.gen(function*() {
        const fresh = yield* events.record({
          id: event.id,
          type: event.type,
          objectId,
          receivedAt,
          outcome: plan.outcome
        })
        if (!fresh) return "replayed" as const
        yield* plan.apply
        return "applied" as const
      }))
      // The order events the change queued were committed only now: the sender may send them.
      if (outcome === "applied") yield* orderEvents.queued
      yield* Effect.logInfo(`Stripe event ${event.id} (${event.type}): ${outcome}, ${plan.outcome}`)
      return outcome
    })

    return StripeWebhooks.of({ receive })
  })
)
