/** Handlers of `api.ts`; a route whose role is switched off answers exactly like an unknown route. */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { answeredWith, commitWithAnswer, type RouteAnswer } from "../../idempotency/idempotent-answer.ts"
import { AppConfig } from "../../platform/config.ts"
import {
  BadRequest,
  Conflict,
  type InternalError,
  NotFound,
  type ServiceUnavailable,
  Unprocessable
} from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { decodeDeclaredBody, readOptionalJson } from "../../platform/http/request-body.ts"
import { requireRole, storageFailure } from "../../platform/http/route-guards.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { orderJson } from "../model/order-json.ts"
import {
  type InvalidRefundAmount,
  OrderCommand,
  type OrderError,
  type RefundExceedsTotal
} from "../model/order-state-machine.ts"
import type { Order } from "../model/order.ts"
import { type OrderNotFound, OrderService } from "../order-service.ts"
import { OrderStore, type OutboxEvent } from "../order-store.ts"
import { OrdersApi, OrdersGroup, WebhookDeliveriesApi } from "./api.ts"
import type { Delivery } from "./api.ts"

const orderNotFound = (id: string) =>
  new NotFound({
    type: "invalid_request",
    code: "not_found",
    message: `No order ${maskCardNumbers(id)}.`,
    param: "$.order_id"
  })

/** Order failures → API errors; a change the order's state forbids is 409: the request itself is fine. */
export type OrderApiErrorOf<E> = E extends { readonly _tag: "OrderNotFound" } ? NotFound
  : E extends { readonly _tag: "InvalidOrderTransition" | "RefundNotAllowed" } ? Conflict
  : E extends { readonly _tag: "RefundExceedsTotal" } ? Unprocessable
  : E extends { readonly _tag: "InvalidRefundAmount" } ? BadRequest
  : E extends { readonly _tag: "StorageError" } ? ServiceUnavailable | InternalError
  : never

export const mapOrderErrors = <A, E extends OrderNotFound | OrderError | StorageError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, OrderApiErrorOf<E>, R> =>
  Effect.catchAll(effect, (error: OrderNotFound | OrderError | StorageError): Effect.Effect<
    never,
    NotFound | Conflict | Unprocessable | BadRequest | ServiceUnavailable | InternalError
  > => {
    switch (error._tag) {
      case "OrderNotFound":
        return Effect.fail(orderNotFound(error.id))
      case "InvalidOrderTransition":
        return Effect.fail(
          new Conflict({
            type: "invalid_request",
            code: "invalid_order_transition",
            message: `The order is ${error.from} and cannot become ${error.to}.`
          })
        )
      case "RefundNotAllowed":
        return Effect.fail(
          new Conflict({
            type: "invalid_request",
            code: "refund_not_allowed",
            message: `Refunds are not allowed while the order is ${error.status}.`
          })
        )
      case "RefundExceedsTotal":
        return Effect.fail(
          new Unprocessable({
            type: "invalid_request",
            code: "refund_exceeds_total",
            message: `The refund exceeds the refundable remainder of ${error.remaining}.`,
            param: "$.amount"
          })
        )
      case "InvalidRefundAmount":
        return Effect.fail(
          new BadRequest({
            type: "invalid_request",
            code: "invalid",
            message: "$.amount must be a positive integer amount.",
            param: "$.amount"
          })
        )
      case "StorageError":
        return storageFailure(error)
    }
  }) as Effect.Effect<A, OrderApiErrorOf<E>, R>

/** Status changes never fail with refund errors; those would be defects. */
const withoutRefundErrors = <A, R>(effect: Effect.Effect<A, OrderNotFound | OrderError | StorageError, R>) =>
  Effect.catchIf(
    effect,
    (error): error is RefundExceedsTotal | InvalidRefundAmount =>
      error._tag === "RefundExceedsTotal" || error._tag === "InvalidRefundAmount",
    (error) => Effect.die(error)
  )

const deliveryAnswer: RouteAnswer<OutboxEvent> = {
  success: (event) => HttpServerResponse.unsafeJson(toDelivery(event))
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export const toDelivery = (event: OutboxEvent): Delivery => ({
  id: event.id,
  order_id: event.orderId,
  sequence: event.sequence,
  type: event.type,
  state: event.state,
  attempts: event.attempts,
  next_attempt_at: new Date(event.nextAttemptAt).toISOString(),
  first_attempt_at: isoOrNull(event.firstAttemptAt),
  last_status: event.lastStatus,
  last_error: event.lastError,
  created_at: new Date(event.createdAt).toISOString(),
  delivered_at: isoOrNull(event.deliveredAt)
})

/** Answered, and on a claimed request committed with the change, as the 200 the API declares. */
const orderAnswer: RouteAnswer<Order> = {
  success: (order) => HttpServerResponse.text(orderJson(order), { contentType: "application/json" })
}

const decodeShipBody = decodeDeclaredBody(OrdersGroup, "ship")
const decodeRefundBody = decodeDeclaredBody(OrdersGroup, "refund")

export const OrdersHandlers = groupHandlers(
  OrdersApi,
  "orders",
  Effect.fnUntraced(function*(handlers) {
    const orders = yield* OrderService
    const config = yield* AppConfig
    const change = (id: string, command: OrderCommand) =>
      Effect.zipRight(
        requireRole(config, "checkout"),
        mapOrderErrors(withoutRefundErrors(orders.apply(id, command)).pipe(answeredWith(orderAnswer)))
      )
    // These routes define no body: one sent anyway is held to the common rules before anything changes.
    const bodiless = (id: string, command: OrderCommand) =>
      Effect.zipRight(requireRole(config, "checkout"), Effect.zipRight(readOptionalJson, change(id, command)))
    return handlers
      .handle(
        "get",
        ({ path }) => Effect.zipRight(requireRole(config, "checkout"), mapOrderErrors(orders.get(path.order_id)))
      )
      .handle("confirm", ({ path }) => bodiless(path.order_id, OrderCommand.Confirm()))
      .handle("hold", ({ path }) => bodiless(path.order_id, OrderCommand.HoldForReview()))
      .handleRaw("ship", ({ path }) =>
        Effect.zipRight(
          requireRole(config, "checkout"),
          Effect.flatMap(decodeShipBody, (body) =>
            change(
              path.order_id,
              OrderCommand.Ship({
                carrier: body.carrier,
                tracking_number: body.tracking_number,
                ...(body.tracking_url !== undefined ? { tracking_url: body.tracking_url } : {})
              })
            ))
        ))
      .handle("fulfill", ({ path }) => bodiless(path.order_id, OrderCommand.Fulfill()))
      .handle("cancel", ({ path }) => bodiless(path.order_id, OrderCommand.Cancel()))
      .handleRaw("refund", ({ path }) =>
        Effect.zipRight(
          requireRole(config, "checkout"),
          Effect.flatMap(
            decodeRefundBody,
            (body) =>
              mapOrderErrors(
                orders.apply(path.order_id, OrderCommand.Refund({ type: body.type, amount: body.amount })).pipe(
                  answeredWith(orderAnswer)
                )
              )
          )
        ))
  })
)

export const WebhookDeliveriesHandlers = groupHandlers(
  WebhookDeliveriesApi,
  "webhookDeliveries",
  Effect.fnUntraced(function*(handlers) {
    const store = yield* OrderStore
    const gate = requireRole(yield* AppConfig, "checkout", "webhook_sender")
    const redrive = Effect.fnUntraced(function*(eventId: string) {
      yield* gate
      // The route defines no body: one sent anyway is held to the common rules.
      yield* readOptionalJson
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const existing = yield* Effect.catchAll(store.getEvent(eventId), storageFailure)
      if (existing._tag === "None") {
        return yield* new NotFound({
          type: "invalid_request",
          code: "not_found",
          message: `No order event ${maskCardNumbers(eventId)}.`,
          param: "$.event_id"
        })
      }
      // The answer is committed with the redrive (a retry after a crash replays it).
      const redriven = yield* Effect.catchAll(
        commitWithAnswer(
          store.transaction,
          store.redrive(eventId, now),
          Option.map((event) => Either.right(event)),
          true
        ),
        storageFailure
      )
      if (redriven._tag === "None") {
        return yield* new Conflict({
          type: "invalid_request",
          code: "delivery_not_dead",
          message: `Order event ${eventId} is ${existing.value.state}; only dead events can be redriven.`
        })
      }
      return redriven.value
    }, answeredWith(deliveryAnswer))
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.zipRight(
          gate,
          store.listEvents({
            ...(urlParams.state !== undefined ? { state: urlParams.state } : {}),
            ...(urlParams.order_id !== undefined ? { orderId: urlParams.order_id } : {}),
            limit: urlParams.limit ?? 100
          }).pipe(
            Effect.map((events) => ({ data: events.map(toDelivery) })),
            Effect.catchAll(storageFailure)
          )
        ))
      .handle("redrive", ({ path }) => redrive(path.event_id))
      .handle("metrics", () => Effect.zipRight(gate, Effect.catchAll(store.countByState, storageFailure)))
  })
)
