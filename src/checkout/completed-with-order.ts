/** A paid session completed with a new order: what `completePaidCheckout` writes, from a request or a settlement. */
import { Effect } from "effect"
import { permalinkUrl } from "../orders/model/order-permalink.ts"
import { type OrderSummary } from "../orders/model/order.ts"
import type { CheckoutContext } from "./checkout-context.ts"
import { reduce } from "./session/reducer.ts"
import { type Session, SessionCommand } from "./session/session.ts"

const newOrderSummary = (ctx: CheckoutContext, sessionId: string) =>
  Effect.map(
    Effect.all([ctx.ids.make("ord_"), ctx.ids.make("")]),
    ([orderId, token]): OrderSummary => ({
      id: orderId,
      checkout_session_id: sessionId,
      permalink_url: permalinkUrl(ctx.config.publicBaseUrl, token)
    })
  )

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
