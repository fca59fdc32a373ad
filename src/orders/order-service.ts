/**
 * Orders after checkout (CONTRACT §8): the order a completion writes, and the merchant's changes. Events
 * carry the currency the order is priced in: the session's at creation, the catalog's afterwards
 * (sessions are always priced in the catalog's currency).
 */
import { Clock, Context, Data, Effect, Either, Layer, Option } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { Catalog } from "../catalog/catalog-service.ts"
import type { LineItem, Total } from "../catalog/model/line-items.ts"
import type { StorageError } from "../db/storage-error.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer.ts"
import { AppConfig } from "../platform/config.ts"
import { Ids } from "../platform/ids.ts"
import { makeOrderEvent } from "./model/order-event.ts"
import { makeOrder, type OrderSourceLineItem } from "./model/order-from-checkout.ts"
import { orderTag } from "./model/order-json.ts"
import { permalinkUrl } from "./model/order-permalink.ts"
import { applyOrderCommand, nextAdjustmentId, OrderCommand, type OrderError } from "./model/order-state-machine.ts"
import type { Order, OrderSummary, RefundRequest } from "./model/order.ts"
import { OrderPayments, type RefundFailure } from "./order-payments.ts"
import { type OrderChange, OrderStore } from "./order-store.ts"
import { OutboxSignal } from "./outbox-signal.ts"

export class OrderNotFound extends Data.TaggedError("OrderNotFound")<{ readonly id: string }> {}

/** The order is no longer as it was shown (`orderTag`): the action was not applied. */
export class OrderChanged extends Data.TaggedError("OrderChanged")<{ readonly id: string }> {}

export interface RecordOrderCreatedInput {
  readonly order: OrderSummary
  readonly lineItems: ReadonlyArray<LineItem>
  readonly totals: ReadonlyArray<Total>
  readonly currency: string
}

/** The completed session's copy of the buyer link; `replace` runs in the order change's transaction. */
export interface OrderLinkCopiesShape {
  readonly replace: (checkoutSessionId: string, permalinkUrl: string) => Effect.Effect<void, StorageError>
}

export class OrderLinkCopies extends Context.Tag("acp/OrderLinkCopies")<OrderLinkCopies, OrderLinkCopiesShape>() {}

export interface OrderEventsShape {
  /** The `created` order and its `order_create` event, unwritten: the completion's store step writes them. */
  readonly orderCreated: (input: RecordOrderCreatedInput) => Effect.Effect<OrderChange>
  /** Events were committed with a step of this process: the sender may send them now (`OutboxSignal`). */
  readonly queued: Effect.Effect<void>
}

export class OrderEvents extends Context.Tag("acp/OrderEvents")<OrderEvents, OrderEventsShape>() {}

export interface RefundOptions {
  /** Only while the order is still as tagged (`orderTag`), as `applyIfUnchanged`. */
  readonly seen?: string
  /** The request's Idempotency-Key: a retry of it finds its refund made and recorded, and makes none. */
  readonly requestKey?: string
}

/** Payment-provider notifications: the changes `reconcile` applies (none refused, each idempotent). */
export type ReconcileCommand = Extract<OrderCommand, { readonly _tag: "RecordPaymentRefunds" | "RecordDispute" }>

/** What names a merchant request on its refund: its key with the order, hashed; a fresh value without a key. */
export const requestReference = (orderId: string, requestKey: string | undefined): string =>
  requestKey === undefined
    ? `req_${randomUUID().replaceAll("-", "")}`
    : `req_${createHash("sha256").update(`${orderId}\n${requestKey}`).digest("base64url").slice(0, 32)}`

export interface OrderServiceShape {
  readonly get: (id: string) => Effect.Effect<Order, OrderNotFound | StorageError>
  /** Applies `command` to the order and queues `order_update`; returns the changed order. */
  readonly apply: (id: string, command: OrderCommand) => Effect.Effect<Order, OrderNotFound | OrderError | StorageError>
  /** `apply`, only while the order is still as tagged `seen` (`orderTag`); otherwise `OrderChanged`. */
  readonly applyIfUnchanged: (
    id: string,
    command: OrderCommand,
    seen: string
  ) => Effect.Effect<Order, OrderNotFound | OrderChanged | OrderError | StorageError>
  /**
   * A refund. To the original payment it first moves the money (`OrderPayments`, keyed by the order and
   * the request), then records it under the order's lock, whatever changed meanwhile: money that moved
   * is always recorded, once (by the provider's reference). Concurrent refunds of one order are each
   * their own refund and adjustment; the provider refuses one that exceeds what its payment has left.
   */
  readonly refund: (
    id: string,
    request: RefundRequest,
    options?: RefundOptions
  ) => Effect.Effect<Order, OrderNotFound | OrderChanged | OrderError | RefundFailure | StorageError>
  /** Applies a provider's notification; writes and queues `order_update` only when it changes the order. */
  readonly reconcile: (id: string, command: ReconcileCommand) => Effect.Effect<Order, OrderNotFound | StorageError>
  /** A new `permalink_url` token (the old link stops working), if unchanged since `seen`; queues `order_update`. */
  readonly replaceBuyerLink: (
    id: string,
    seen: string
  ) => Effect.Effect<Order, OrderNotFound | OrderChanged | StorageError>
}

export class OrderService extends Context.Tag("acp/OrderService")<OrderService, OrderServiceShape>() {}

export const OrderEventsLive = Layer.effect(
  OrderEvents,
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const ids = yield* Ids
    const signal = yield* OutboxSignal
    const orderCreated: OrderEventsShape["orderCreated"] = Effect.fnUntraced(function*(input) {
      const { order: summary } = input
      const now = yield* Clock.currentTimeMillis
      const lineItems: ReadonlyArray<OrderSourceLineItem> = input.lineItems.map((line) => {
        const product = catalog.latest().products.get(line.item.id)
        return { ...line, title: product?.title ?? line.item.id, kind: product?.kind ?? "physical" }
      })
      const order = makeOrder({
        id: summary.id,
        checkoutSessionId: summary.checkout_session_id,
        permalinkUrl: summary.permalink_url,
        lineItems,
        totals: input.totals
      })
      const id = yield* ids.make("evt_")
      return {
        stored: { order, sessionId: summary.checkout_session_id, createdAt: now },
        event: { id, payload: makeOrderEvent("order_create", order, input.currency), now }
      }
    })
    return OrderEvents.of({ orderCreated, queued: signal.queued })
  })
)

export const OrderServiceLive = Layer.effect(
  OrderService,
  Effect.gen(function*() {
    const store = yield* OrderStore
    const ids = yield* Ids
    const catalog = yield* Catalog
    const linkCopies = yield* OrderLinkCopies
    const signal = yield* OutboxSignal
    const { publicBaseUrl } = yield* AppConfig
    const found = (id: string) =>
      Option.match({
        onNone: () => Effect.fail(new OrderNotFound({ id })),
        onSome: (stored: { readonly order: Order; readonly sessionId: string; readonly createdAt: number }) =>
          Effect.succeed(stored)
      })
    const nothing = () => Effect.void
    const unchangedSince = (id: string, seen: string) => (order: Order) =>
      orderTag(order) === seen ? Effect.void : Effect.fail(new OrderChanged({ id }))
    /** `change`'s transaction: the generator is made once, not per change (eslint.config.mjs). */
    const changeLocked = Effect.fnUntraced(function*<E1, E2>(
      id: string,
      command: OrderCommand,
      check: (order: Order) => Effect.Effect<void, E1>,
      andThen: (order: Order) => Effect.Effect<void, E2>
    ): Effect.fn.Return<Order, OrderNotFound | OrderError | StorageError | E1 | E2> {
      const stored = yield* Effect.flatMap(store.lockOrder(id), found(id))
      yield* check(stored.order)
      const now = yield* Clock.currentTimeMillis
      const changed = applyOrderCommand(stored.order, command, new Date(now).toISOString())
      if (Either.isLeft(changed)) return yield* Effect.fail(changed.left)
      // A notification already applied (a redelivery, a refund this service recorded): no write, no event.
      if (changed.right === stored.order) return stored.order
      const eventId = yield* ids.make("evt_")
      yield* store.saveOrderWithEvent(
        { ...stored, order: changed.right },
        { id: eventId, payload: makeOrderEvent("order_update", changed.right, catalog.latest().currency), now }
      )
      yield* andThen(changed.right)
      return changed.right
    })
    /** One transaction under the order's lock: `check`, apply `command`, store it with its event, `andThen`. */
    const change = <E1, E2>(
      id: string,
      command: OrderCommand,
      check: (order: Order) => Effect.Effect<void, E1>,
      andThen: (order: Order) => Effect.Effect<void, E2>
    ) =>
      commitWithAnswer(
        store.transaction,
        changeLocked(id, command, check, andThen),
        (order) => Option.some(Either.right(order))
      ).pipe(Effect.tap(() => signal.queued))
    const payments = yield* OrderPayments
    const refusalsAreDefects = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.catchIf(
        effect,
        (error): error is Extract<E, OrderError> =>
          error._tag === "InvalidOrderTransition" || error._tag === "RefundExceedsTotal" ||
          error._tag === "RefundNotAllowed" || error._tag === "InvalidRefundAmount",
        Effect.die
      ) as unknown as Effect.Effect<A, Exclude<E, OrderError>, R>
    const reconcile: OrderServiceShape["reconcile"] = (id, command) =>
      refusalsAreDefects(change(id, command, nothing, nothing))
    const refund = Effect.fnUntraced(function*(
      id: string,
      request: RefundRequest,
      options: RefundOptions = {}
    ): Effect.fn.Return<Order, OrderNotFound | OrderChanged | OrderError | RefundFailure | StorageError> {
      const command = OrderCommand.Refund({ type: request.type, amount: request.amount })
      const check = options.seen === undefined ? nothing : unchangedSince(id, options.seen)
      if (request.type === "store_credit") return yield* change(id, command, check, nothing)
      const { order } = yield* Effect.flatMap(store.getOrder(id), found(id))
      yield* check(order)
      const reference = requestReference(id, options.requestKey)
      // A retry of a request whose refund is recorded (before a crash, or from the provider's notification).
      if (options.requestKey !== undefined && order.adjustments.some((a) => a.request_reference === reference)) {
        return order
      }
      // Refused here as the locked write would refuse it, before any money moves.
      const now = yield* Clock.currentTimeMillis
      const decided = applyOrderCommand(order, command, new Date(now).toISOString())
      if (Either.isLeft(decided)) return yield* Effect.fail(decided.left)
      const made = yield* payments.refundOriginalPayment({
        orderId: id,
        checkoutSessionId: order.checkout_session_id,
        adjustmentId: nextAdjustmentId(order),
        amount: request.amount,
        requestReference: reference
      })
      // Nothing moved (the built-in processor): the refund is the order's own, checked under the lock.
      if (Option.isNone(made)) return yield* change(id, command, check, nothing)
      return yield* reconcile(
        id,
        OrderCommand.RecordPaymentRefunds({
          refunds: [{ reference: made.value.reference, amount: request.amount, request_reference: reference }]
        })
      )
    })
    const relinkSession = (order: Order) => linkCopies.replace(order.checkout_session_id, order.permalink_url)
    return OrderService.of({
      get: (id) => Effect.map(Effect.flatMap(store.getOrder(id), found(id)), (stored) => stored.order),
      apply: (id, command) => change(id, command, nothing, nothing),
      applyIfUnchanged: (id, command, seen) => change(id, command, unchangedSince(id, seen), nothing),
      refund,
      reconcile,
      replaceBuyerLink: (id, seen) =>
        Effect.flatMap(
          ids.make(""),
          (token) =>
            change(
              id,
              OrderCommand.ReplacePermalink({ permalink_url: permalinkUrl(publicBaseUrl, token) }),
              unchangedSince(id, seen),
              relinkSession
            )
              .pipe(
                // The command is allowed in every status: a refusal here would be a defect.
                Effect.catchIf(
                  (error): error is OrderError =>
                    error._tag !== "OrderNotFound" && error._tag !== "OrderChanged" && error._tag !== "StorageError",
                  Effect.die
                )
              )
        )
    })
  })
)

export const OrderServicesLive = Layer.merge(OrderEventsLive, OrderServiceLive)
