/**
 * Checkout sessions: the domain reducer applied to stored state, one transaction per change.
 *
 * Each operation reads what the reducer needs (the session, locked; the stock available to it,
 * locked), runs the pure reducer at the Clock's time, then writes the new session, its
 * reservations and, on completion, the order — all in the same transaction.
 */
import { Clock, Context, Data, Effect, Either, Layer, Option } from "effect"
import type { CatalogSnapshot } from "../domain/catalog.ts"
import type {
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  MessageError,
  Order,
  PaymentData
} from "../domain/checkout.ts"
import { reduce, view } from "../domain/session-reducer.ts"
import {
  type ReducerContext,
  type ReducerError,
  type Session,
  type SessionFinal,
  SessionCommand,
  type Transition
} from "../domain/session-model.ts"
import { CheckoutStore, type StorageError } from "../storage/checkout-store.ts"
import { Catalog } from "./catalog.ts"
import { AppConfig } from "./config.ts"
import { Ids } from "./ids.ts"
import {
  type PaymentCredential,
  PaymentDeclined,
  PaymentProvider,
  PaymentRejected
} from "./payment-provider.ts"

export class SessionNotFound extends Data.TaggedError("SessionNotFound")<{ readonly id: string }> {}

/** `payment_data` names a handler or provider this merchant does not offer → 400 invalid. */
export class InvalidPaymentData extends Data.TaggedError("InvalidPaymentData")<{
  readonly param: string
  readonly message: string
}> {}

export type CompleteError =
  | ReducerError
  | SessionNotFound
  | InvalidPaymentData
  | PaymentDeclined
  | PaymentRejected
  | StorageError

export interface CheckoutServiceShape {
  readonly create: (request: CheckoutSessionCreateRequest) => Effect.Effect<Session, ReducerError | StorageError>
  readonly get: (id: string) => Effect.Effect<Session, SessionNotFound | StorageError>
  readonly update: (
    id: string,
    request: CheckoutSessionUpdateRequest
  ) => Effect.Effect<Session, ReducerError | SessionNotFound | StorageError>
  readonly complete: (
    id: string,
    request: CheckoutSessionCompleteRequest
  ) => Effect.Effect<Session & { readonly order: Order }, CompleteError>
  readonly cancel: (id: string) => Effect.Effect<Session, SessionFinal | SessionNotFound | StorageError>
  /** Marks sessions idle past their TTL as expired and releases their stock; returns how many. */
  readonly expireDue: (limit: number) => Effect.Effect<number, StorageError>
}

export class CheckoutService extends Context.Tag("acp/CheckoutService")<CheckoutService, CheckoutServiceShape>() {}

const uniqueProductIds = (...lists: ReadonlyArray<ReadonlyArray<{ readonly id: string }> | undefined>) =>
  [...new Set(lists.flatMap((list) => (list ?? []).map((item) => item.id)))].sort()

/** The credential of a complete request, checked against the payment handlers of the catalog. */
export const resolveCredential = (
  paymentData: PaymentData,
  catalog: CatalogSnapshot
): Either.Either<PaymentCredential, InvalidPaymentData> => {
  if ("handler_id" in paymentData) {
    if (!catalog.paymentHandlers.some((handler) => handler.id === paymentData.handler_id)) {
      return Either.left(
        new InvalidPaymentData({
          param: "$.payment_data.handler_id",
          message: `$.payment_data.handler_id must name a payment handler offered on the session (${
            catalog.paymentHandlers.map((h) => h.id).join(", ")
          })`
        })
      )
    }
    return Either.right({
      kind: "handler",
      handlerId: paymentData.handler_id,
      instrumentType: paymentData.instrument.type,
      credentialType: paymentData.instrument.credential.type,
      token: paymentData.instrument.credential.token
    })
  }
  const providers = [...new Set(catalog.paymentHandlers.map((handler) => handler.psp))]
  if (!providers.includes(paymentData.provider)) {
    return Either.left(
      new InvalidPaymentData({
        param: "$.payment_data.provider",
        message: `$.payment_data.provider must name the merchant's payment service provider (${providers.join(", ")})`
      })
    )
  }
  return Either.right({ kind: "legacy", provider: paymentData.provider, token: paymentData.token })
}

/** The amount to charge: the session's `total` line. */
export const sessionTotal = (session: Session): number =>
  session.totals.find((total) => total.type === "total")?.amount ?? 0

const paymentMessage = (error: PaymentDeclined | PaymentRejected): MessageError => ({
  type: "error",
  code: "payment_declined",
  param: error._tag === "PaymentRejected" ? error.param : "$.payment_data",
  content_type: "plain",
  content: error.message
})

export const CheckoutServiceLive = Layer.effect(
  CheckoutService,
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const catalog = yield* Catalog
    const config = yield* AppConfig
    const ids = yield* Ids
    const payments = yield* PaymentProvider
    // The catalog file seeds stock for products the database does not know yet.
    yield* store.seedStock([...catalog.products.values()].map((product) => ({ id: product.id, stock: product.stock })))

    const context = (now: number, available: ReadonlyMap<string, number> = new Map()): ReducerContext => ({
      catalog,
      now,
      sessionTtlSeconds: config.sessionTtlSeconds,
      available
    })

    const lockExisting = (id: string) =>
      Effect.flatMap(
        store.lockSession(id),
        Option.match({ onNone: () => Effect.fail(new SessionNotFound({ id })), onSome: Effect.succeed })
      )

    /** Writes a transition of an existing session: the session row and its reservations. */
    const save = (transition: Transition) =>
      Effect.zipRight(
        store.updateSession(transition.session),
        transition.reservations.size === 0
          ? store.releaseReservations(transition.session.id)
          : store.setReservations(
            transition.session.id,
            transition.reservations,
            Date.parse(transition.session.expires_at)
          )
      )

    const create: CheckoutServiceShape["create"] = (request) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const id = yield* ids.make("cs_")
        return yield* store.transaction(Effect.gen(function*() {
          const available = yield* store.lockStock(uniqueProductIds(request.items), now, id)
          const transition = yield* reduce(undefined, SessionCommand.Create({ id, request }), context(now, available))
          yield* store.insertSession(transition.session)
          yield* store.setReservations(id, transition.reservations, Date.parse(transition.session.expires_at))
          return transition.session
        }))
      })

    const get: CheckoutServiceShape["get"] = (id) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const session = yield* store.getSession(id)
        if (Option.isNone(session)) return yield* new SessionNotFound({ id })
        return view(session.value, now)
      })

    const update: CheckoutServiceShape["update"] = (id, request) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return yield* store.transaction(Effect.gen(function*() {
          const session = yield* lockExisting(id)
          const available = request.items === undefined
            ? new Map<string, number>()
            : yield* store.lockStock(uniqueProductIds(session.items, request.items), now, id)
          const transition = yield* reduce(session, SessionCommand.Update({ request }), context(now, available))
          yield* save(transition)
          return transition.session
        }))
      })

    const complete: CheckoutServiceShape["complete"] = (id, request) =>
      Effect.gen(function*() {
        const credential = yield* resolveCredential(request.payment_data, catalog)
        const now = yield* Clock.currentTimeMillis
        const outcome = yield* store.transaction(Effect.gen(function*() {
          const session = yield* lockExisting(id)
          const prepared = yield* reduce(
            session,
            SessionCommand.PrepareCompletion({ buyer: request.buyer }),
            context(now)
          )
          const charged = yield* payments.charge({
            sessionId: id,
            amount: sessionTotal(prepared.session),
            currency: prepared.session.currency,
            credential,
            idempotencyKey: `checkout:${id}`
          }).pipe(Effect.either)
          if (Either.isLeft(charged)) {
            const failed = yield* reduce(
              prepared.session,
              SessionCommand.RecordPaymentFailure({ message: paymentMessage(charged.left) }),
              context(now)
            )
            yield* save(failed)
            return Either.left(charged.left)
          }
          const orderId = yield* ids.make("ord_")
          const order = {
            id: orderId,
            checkout_session_id: id,
            permalink_url: `${config.publicBaseUrl}/orders/${orderId}`
          }
          const completed = yield* reduce(prepared.session, SessionCommand.MarkCompleted({ order }), context(now))
          yield* store.consumeReservations(id)
          yield* store.insertOrder({ order, sessionId: id, createdAt: now })
          yield* store.updateSession(completed.session)
          return Either.right({ ...completed.session, order })
        }))
        return yield* outcome
      })

    const cancel: CheckoutServiceShape["cancel"] = (id) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return yield* store.transaction(Effect.gen(function*() {
          const session = yield* lockExisting(id)
          const transition = yield* reduce(session, SessionCommand.Cancel(), context(now)).pipe(
            Effect.catchIf((error) => error._tag !== "SessionFinal", Effect.die)
          ) as Effect.Effect<Transition, SessionFinal>
          yield* save(transition)
          return transition.session
        }))
      })

    const expireDue: CheckoutServiceShape["expireDue"] = (limit) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return yield* store.transaction(Effect.gen(function*() {
          const due = yield* store.findExpiredSessionIds(now, limit)
          let expired = 0
          for (const id of due) {
            const session = yield* store.lockSession(id)
            if (Option.isNone(session)) continue
            const transition = yield* reduce(session.value, SessionCommand.Expire(), context(now)).pipe(Effect.orDie)
            if (transition.session.status === "expired") {
              yield* save(transition)
              expired++
            }
          }
          return expired
        }))
      })

    return { create, get, update, complete, cancel, expireDue }
  })
)
