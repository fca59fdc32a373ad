/**
 * The port through which an order's refund to the original payment moves money: orders know no
 * payment provider, the provider's feature implements it (`src/stripe/order-refunds.ts`). The
 * built-in one moves nothing: the built-in test processor's charges are not real money.
 */
import { Context, Data, Effect, Layer, Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"

export interface RefundToMake {
  readonly orderId: string
  readonly checkoutSessionId: string
  /** The adjustment the refund becomes on the order as read (`adj_<n>`), for the provider's record. */
  readonly adjustmentId: string
  /** Minor units, at least 1. */
  readonly amount: number
  /**
   * Names the merchant request asking (`Adjustment.request_reference`): with the order, the refund's
   * key at the provider, and kept with its refund, so its notification names the request.
   */
  readonly requestReference: string
}

export interface RefundMade {
  /** The provider's id of the refund (`re_…`), recorded on the adjustment. */
  readonly reference: string
}

/** The provider refused the refund as asked (over what is left, a disputed payment): nothing moved. */
export class RefundRefused extends Data.TaggedError("RefundRefused")<{
  readonly code: string
  readonly message: string
  readonly param: string | undefined
}> {}

/** The provider could not be reached or is busy: nothing is known to have moved; the same request may be repeated. */
export class RefundUnavailable extends Data.TaggedError("RefundUnavailable")<{
  readonly retryAfterSeconds: number | undefined
}> {}

/** The request's key was used with other parameters, or is in use right now: this refund was not made. */
export class RefundKeyTaken extends Data.TaggedError("RefundKeyTaken")<{ readonly orderId: string }> {}

export type RefundFailure = RefundRefused | RefundUnavailable | RefundKeyTaken

export interface OrderPaymentsShape {
  /**
   * Refunds `amount` of the order's original payment, keyed by (order, request): asked again with the
   * same, the provider answers the first refund and moves nothing more. None when the
   * order's payment moved no real money (nothing to give back).
   */
  readonly refundOriginalPayment: (refund: RefundToMake) => Effect.Effect<
    Option.Option<RefundMade>,
    RefundFailure | StorageError
  >
}

export class OrderPayments extends Context.Tag("acp/OrderPayments")<OrderPayments, OrderPaymentsShape>() {}

/** Payments that move no money (the built-in test processor's). */
export const NoOrderPayments = Layer.succeed(
  OrderPayments,
  OrderPayments.of({ refundOriginalPayment: () => Effect.succeed(Option.none()) })
)
