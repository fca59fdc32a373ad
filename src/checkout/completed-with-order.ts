/**
 * A paid session completed with a new order: the order summary (a new id and the buyer's
 * capability URL), the session marked completed, and the order's `order_create` change. What the
 * paid completion writes in one store step (`completePaidCheckout`), on a request's completion
 * and on the settlement of a payment its request left pending.
 */
import { Effect } from "effect"
import { permalinkUrl } from "../orders/model/order-permalink.ts"
import { type OrderSummary } from "../orders/model/order.ts"
import type { CheckoutContext } from "./checkout-context.ts"
import { reduce } from "./session/reducer.ts"
import { type Session, SessionCommand } from "./session/session.ts"

/** The order summary of a session being completed: a new id, and its buyer's capability URL. */
const newOrderSummary = (ctx: CheckoutContext, sessionId: string) =>
  Effect.map(
    Effect.all([ctx.ids.make("ord_"), ctx.ids.make("")]),
    ([orderId, token]): OrderSummary => ({
      id: orderId,
      checkout_session_id: sessionId,
      permalink_url: permalinkUrl(ctx.config.publicBaseUrl, token)
    })
  )

/**
 * `session` completed at `now` with a new order, and the order's `order_create` change: what the
 * paid completion's store step writes together (`completePaidCheckout`).
 */
export const completedWithNewOrder = Effect.fnUntraced(function*(ctx: CheckoutContext, session: Session, now: number) {
  const order = yield* newOrderSummary(ctx, session.id)
  const completed = (yield* reduce(session, SessionCommand.MarkCompleted({ order }), ctx.reducerContext(now))).session
  return {
    completed: { ...completed, order },
    change: yield* ctx.orderEvents.orderCreated({
      order,
      lineItems: completed.line_items,
      totals: completed.totals,
      currency: completed.currency
    })
  }
})
