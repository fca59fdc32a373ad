/** The completed session's order summary, kept showing the order's current buyer link (`OrderLinkCopies`). */
import { Effect, Layer, Option } from "effect"
import { OrderLinkCopies } from "../orders/order-service.ts"
import { CheckoutStore } from "./checkout-store.ts"

export const CheckoutOrderLinkCopies = Layer.effect(
  OrderLinkCopies,
  Effect.map(CheckoutStore, (store) =>
    OrderLinkCopies.of({
      replace: (checkoutSessionId, permalinkUrl) =>
        Effect.flatMap(store.sessions.lock(checkoutSessionId), (locked) =>
          Option.match(locked, {
            onNone: () => Effect.void,
            onSome: ({ session }) =>
              session.order === undefined
                ? Effect.void
                : Effect.asVoid(
                  store.sessions.update({ ...session, order: { ...session.order, permalink_url: permalinkUrl } })
                )
          }))
    }))
)
