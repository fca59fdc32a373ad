/**
 * The console's order pages and actions. Actions call the same `OrderService` as the API, on the order
 * as the page showed it (`orderTag`), and redirect to its page with what was done, or show why not.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option, Schema } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { CheckoutStore } from "../../checkout/checkout-store.ts"
import type { StorageError } from "../../db/storage-error.ts"
import { orderTag } from "../../orders/model/order-json.ts"
import { OrderCommand } from "../../orders/model/order-state-machine.ts"
import {
  ORDER_STATUSES,
  type OrderStatus,
  type RefundRequest,
  RefundType,
  ShipRequest
} from "../../orders/model/order.ts"
import { OrderService } from "../../orders/order-service.ts"
import { OrderStore } from "../../orders/order-store.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { unstorableTextPath } from "../../shared/storable-text.ts"
import type { ConsoleSession } from "../console-session-store.ts"
import type { FormFields } from "./access-middleware.ts"
import type { Frame, Notice } from "./layout.ts"
import { minorUnitsOf, orderPath, renderOrderDetail, renderOrderList } from "./order-pages.ts"
import { notFoundPage, pageResponse, redirect } from "./page-handlers.ts"

export type FrameOf = (session: ConsoleSession, title: string, notice?: Notice) => Frame

export const queryParam = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const value = new URL(request.url, "http://console").searchParams.get(name)?.trim()
  return value === undefined || value.length === 0 ? undefined : value
}

/** An id no store can hold (a NUL, an unpaired surrogate): no such record, without asking the store. */
export const unstorableId = (id: string): boolean => unstorableTextPath(id) !== undefined

/** What each action did, shown on the order's page after it (never text from the request). */
const DONE: Readonly<Record<string, string>> = {
  confirm: "Order confirmed.",
  hold: "Order held for review.",
  ship: "Order shipped.",
  fulfill: "Order marked fulfilled.",
  cancel: "Order canceled.",
  refund: "Refund recorded.",
  "new-buyer-link": "New buyer link made: the old link no longer opens the order."
}

const problem = (text: string): Notice => ({ kind: "problem", text })

type Decided =
  | { readonly command: OrderCommand }
  | { readonly refund: RefundRequest }
  | { readonly refused: string }

const shipCommand = (fields: FormFields): Decided => {
  const url = fields.get("tracking_url")?.trim() ?? ""
  const input = {
    carrier: fields.get("carrier")?.trim() ?? "",
    tracking_number: fields.get("tracking_number")?.trim() ?? "",
    ...(url.length > 0 ? { tracking_url: url } : {})
  }
  const decoded = Schema.decodeUnknownOption(ShipRequest)(input)
  if (Option.isNone(decoded) || unstorableTextPath(input) !== undefined || input.carrier === "") {
    return {
      refused: "Give a carrier and a tracking number (at most 128 characters each) and, if any, a tracking URL."
    }
  }
  return { command: OrderCommand.Ship(decoded.value) }
}

const refundCommand = (fields: FormFields): Decided => {
  const amount = minorUnitsOf(fields.get("amount") ?? "")
  const type = Schema.decodeUnknownOption(RefundType)(fields.get("type"))
  if (amount === undefined || Option.isNone(type)) {
    return { refused: "Give the refund as a positive amount with at most two decimals, and where it goes." }
  }
  return { refund: { type: type.value, amount } }
}

const STATUS_COMMANDS: Readonly<Record<string, OrderCommand>> = {
  confirm: OrderCommand.Confirm(),
  hold: OrderCommand.HoldForReview(),
  fulfill: OrderCommand.Fulfill(),
  cancel: OrderCommand.Cancel()
}

const decide = (action: string, fields: FormFields): Decided | undefined =>
  action === "ship"
    ? shipCommand(fields)
    : action === "refund"
    ? refundCommand(fields)
    : Object.hasOwn(STATUS_COMMANDS, action)
    ? { command: STATUS_COMMANDS[action]! }
    : undefined

export const makeOrderHandlers = Effect.fnUntraced(function*(frameOf: FrameOf) {
  const orders = yield* OrderService
  const store = yield* OrderStore
  const checkout = yield* CheckoutStore
  // Its currency is the file's: fixed.
  const catalog = (yield* Catalog).latest()

  const list = Effect.fnUntraced(function*(session: ConsoleSession) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const given = queryParam(request, "status")
    const status = ORDER_STATUSES.find((name) => name === given)
    const search = queryParam(request, "q")?.slice(0, 128)
    const found = search !== undefined && unstorableId(search) ? [] : yield* store.listOrders({
      ...(status !== undefined ? { status } : {}),
      ...(search !== undefined ? { search } : {}),
      limit: 100
    })
    return pageResponse(
      frameOf(session, "Orders"),
      renderOrderList(found, { status: status as OrderStatus | undefined, search }, catalog.currency)
    )
  })

  const detail = Effect.fnUntraced(function*(session: ConsoleSession, id: string, notice?: Notice, status = 200) {
    const stored = unstorableId(id) ? Option.none() : yield* store.getOrder(id)
    if (Option.isNone(stored)) {
      return notFoundPage(frameOf(session, "Order not found"), `No order ${maskCardNumbers(id)}.`)
    }
    const { createdAt, order } = stored.value
    const events = yield* store.listEvents({ orderId: order.id, limit: 100 })
    const checkoutSession = yield* checkout.sessions.get(order.checkout_session_id)
    return pageResponse(
      frameOf(session, `Order ${order.id}`, notice),
      renderOrderDetail({
        order,
        createdAt,
        buyer: Option.getOrUndefined(checkoutSession)?.buyer,
        events,
        currency: catalog.currency,
        csrfToken: session.csrfToken,
        seen: orderTag(order)
      }),
      status
    )
  })

  const view = (session: ConsoleSession, id: string) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const asked = queryParam(request, "done") ?? ""
      // Own keys only: the query is the client's text (`constructor` is no notice).
      const done = Object.hasOwn(DONE, asked) ? DONE[asked] : undefined
      return detail(session, id, done === undefined ? undefined : { kind: "notice", text: done })
    })

  const act = (
    session: ConsoleSession,
    id: string,
    action: string,
    fields: FormFields
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, StorageError> => {
    if (unstorableId(id)) return detail(session, id)
    const done = Effect.succeed(redirect(`${orderPath(id)}?done=${action}`))
    const seen = fields.get("seen") ?? ""
    const changed = () =>
      detail(
        session,
        id,
        problem("The order changed since the page was shown; nothing was done. Check it and try again."),
        409
      )
    if (action === "new-buyer-link") {
      return orders.replaceBuyerLink(id, seen).pipe(
        Effect.zipRight(done),
        Effect.catchTags({ OrderNotFound: () => detail(session, id), OrderChanged: changed })
      )
    }
    const decided = decide(action, fields)
    if (decided === undefined) {
      return Effect.succeed(notFoundPage(frameOf(session, "No such action"), `No action ${maskCardNumbers(action)}.`))
    }
    if ("refused" in decided) return detail(session, id, problem(decided.refused), 400)
    // A refund to the original payment goes to the payment provider first (`OrderService.refund`). The
    // form as filled in on the order as shown is the request: submitted again (after the provider was
    // unavailable) it replays the provider's refund instead of making another.
    const applied = "refund" in decided
      ? orders.refund(id, decided.refund, {
        seen,
        requestKey: `console:${seen}:${decided.refund.type}:${decided.refund.amount}`
      })
      : orders.applyIfUnchanged(id, decided.command, seen)
    return applied.pipe(
      Effect.zipRight(done),
      Effect.catchTags({
        RefundRefused: (error) =>
          detail(
            session,
            id,
            problem(
              error.code === "charge_disputed"
                ? "The payment is disputed: it cannot be refunded while the dispute is open. Nothing was refunded."
                : `The payment provider refused the refund (${error.code}). Nothing was refunded.`
            ),
            error.code === "charge_disputed" ? 409 : 422
          ),
        RefundUnavailable: () =>
          detail(
            session,
            id,
            problem(
              "The payment provider did not answer; the refund was not recorded. Submitting the same refund " +
                "again in a moment cannot refund twice."
            ),
            503
          ),
        RefundKeyTaken: changed,
        OrderNotFound: () => detail(session, id),
        OrderChanged: changed,
        InvalidOrderTransition: (error) =>
          detail(session, id, problem(`The order is ${error.from} and cannot become ${error.to}.`), 409),
        RefundNotAllowed: (error) =>
          detail(session, id, problem(`Refunds are not possible while the order is ${error.status}.`), 409),
        RefundExceedsTotal: () => detail(session, id, problem("The refund is more than what is left to refund."), 422),
        InvalidRefundAmount: () => detail(session, id, problem("The refund amount is not valid."), 400)
      })
    )
  }

  return { list, view, act }
})
