/** Handlers of `api.ts`; a route whose role is switched off answers exactly like an unknown route. */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import {
  answeredWith,
  answerIsNotNow,
  commitWithAnswer,
  type RouteAnswer
} from "../../idempotency/idempotent-answer.ts"
import { AppConfig } from "../../platform/config.ts"
import {
  BadRequest,
  Conflict,
  type InternalError,
  NotFound,
  ServiceUnavailable,
  Unprocessable
} from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { decodeDeclaredBody, readOptionalJson } from "../../platform/http/request-body.ts"
import {
  IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS,
  SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS,
  setRetryAfter
} from "../../platform/http/retry-after.ts"
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
import type { RefundFailure } from "../order-payments.ts"
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
  : E

type OrderFailure = OrderNotFound | OrderError | StorageError

const ORDER_FAILURES: ReadonlySet<string> = new Set([
  "OrderNotFound",
  "InvalidOrderTransition",
  "RefundNotAllowed",
  "RefundExceedsTotal",
  "InvalidRefundAmount",
  "StorageError"
])

const isOrderFailure = (error: unknown): error is OrderFailure =>
  typeof error === "object" && error !== null && "_tag" in error && ORDER_FAILURES.has(String(error._tag))

/** The order failures of `effect` as API errors; any other failure passes through. */
export const mapOrderErrors = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, OrderApiErrorOf<E>, R> =>
  Effect.catchIf(effect, isOrderFailure, (error: OrderFailure): Effect.Effect<
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

/** What the payment provider's refusal is as a JSONPath of the refund request, when it names a field of it. */
const requestParam = (param: string | undefined) => (param === "amount" ? "$.amount" : undefined)

/**
 * The payment provider's failures of a refund: nothing was written. Unavailable is 503 with
 * `Retry-After`; another refund under the same adjustment is a 409 to retry (the key is released).
 */
export const mapRefundFailures = <A, E, R>(effect: Effect.Effect<A, E | RefundFailure, R>) =>
  Effect.catchIf(
    effect,
    (error): error is RefundFailure =>
      typeof error === "object" && error !== null && "_tag" in error &&
      (error._tag === "RefundRefused" || error._tag === "RefundUnavailable" || error._tag === "RefundKeyTaken"),
    (error): Effect.Effect<never, Conflict | Unprocessable | ServiceUnavailable> => {
      switch (error._tag) {
        case "RefundUnavailable":
          return Effect.zipRight(
            setRetryAfter(error.retryAfterSeconds ?? SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS.checkout),
            Effect.fail(
              new ServiceUnavailable({
                type: "service_unavailable",
                code: "service_unavailable",
                message: "The payment provider did not answer; the refund was not recorded. Retry with the same " +
                  "Idempotency-Key: a retry cannot refund twice."
              })
            )
          )
        case "RefundKeyTaken":
          return Effect.zipRight(
            Effect.zipRight(setRetryAfter(IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS), answerIsNotNow),
            Effect.fail(
              new Conflict({
                type: "invalid_request",
                code: "refund_conflict",
                message: "Another refund of this order was being made at the same time; this one was not made. " +
                  "Check the order and retry."
              })
            )
          )
        case "RefundRefused":
          if (error.code === "charge_disputed") {
            return Effect.fail(
              new Conflict({
                type: "invalid_request",
                code: "payment_disputed",
                message: "The payment is disputed: it cannot be refunded while the dispute is open."
              })
            )
          }
          return Effect.fail(
            new Unprocessable({
              type: "invalid_request",
              code: error.code === "amount_too_large" || error.code === "charge_already_refunded"
                ? "refund_exceeds_total"
                : "refund_refused",
              message: `The payment provider refused the refund (${error.code}): ${maskCardNumbers(error.message)}`,
              ...(requestParam(error.param) !== undefined ? { param: requestParam(error.param)! } : {})
            })
          )
      }
    }
  )

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
      .handleRaw("refund", ({ path, request }) =>
        Effect.zipRight(
          requireRole(config, "checkout"),
          Effect.flatMap(
            decodeRefundBody,
            (body) => {
              const requestKey = request.headers["idempotency-key"]
              return orders.refund(path.order_id, { type: body.type, amount: body.amount }, {
                ...(requestKey !== undefined ? { requestKey } : {})
              }).pipe(
                // Only a refund given the order as seen fails so.
                Effect.catchTag("OrderChanged", Effect.die),
                answeredWith(orderAnswer),
                mapRefundFailures,
                mapOrderErrors
              )
            }
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
