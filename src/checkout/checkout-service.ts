/** The `CheckoutService` the handlers call: the use cases of `session-changes.ts` and `completion.ts`. */
import { Clock, Context, Effect, Layer } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { makeCheckoutContext } from "./checkout-context.ts"
import { type CompleteError, makeCheckoutCompletion } from "./completion.ts"
import { makePaymentSettlement, type Settlement } from "./payment-settlement.ts"
import { makeSessionChanges } from "./session-changes.ts"
import type { PaymentInProgress, SessionNotFound } from "./session/errors.ts"
import type {
  CancelSessionInput,
  CompleteSessionInput,
  CreateSessionInput,
  ReducerError,
  Session,
  SessionFinal,
  UpdateSessionInput
} from "./session/session.ts"

export type { CompleteError } from "./completion.ts"

export interface CheckoutServiceShape {
  readonly create: (request: CreateSessionInput) => Effect.Effect<Session, ReducerError | StorageError>
  readonly get: (id: string) => Effect.Effect<Session, SessionNotFound | StorageError>
  /** `get` as the wire form's JSON text, the store's own when the session shows as stored. */
  readonly getJson: (id: string) => Effect.Effect<string, SessionNotFound | StorageError>
  readonly update: (
    id: string,
    request: UpdateSessionInput
  ) => Effect.Effect<Session, ReducerError | PaymentInProgress | SessionNotFound | StorageError>
  /** The completed session with its `order`, or the session in `authentication_required` (nothing charged). */
  readonly complete: (id: string, request: CompleteSessionInput) => Effect.Effect<Session, CompleteError>
  readonly cancel: (
    id: string,
    request?: CancelSessionInput
  ) => Effect.Effect<Session, SessionFinal | PaymentInProgress | SessionNotFound | StorageError>
  /** Expires sessions idle past their TTL and settles payments left pending; returns how many. */
  readonly expireDue: (limit: number) => Effect.Effect<number, StorageError>
  /** Settles the session's pending payment now, ignoring the grace period (the provider said it is final). */
  readonly settlePayment: (sessionId: string) => Effect.Effect<Settlement, StorageError>
}

export class CheckoutService extends Context.Tag("acp/CheckoutService")<CheckoutService, CheckoutServiceShape>() {}

export const CheckoutServiceLive = Layer.effect(
  CheckoutService,
  Effect.gen(function*() {
    const ctx = yield* makeCheckoutContext
    const { catalog, store } = ctx
    // The catalog seeds only what the database does not know yet.
    yield* store.inventory.seedStock(
      [...catalog.products.values()].map((product) => ({ id: product.id, stock: product.stock }))
    )
    yield* store.coupons.seed(
      catalog.coupons.map((coupon) => ({ id: coupon.id, timesRedeemed: coupon.times_redeemed ?? 0 }))
    )
    const { settlePendingPayment } = makePaymentSettlement(ctx)
    return CheckoutService.of({
      ...makeSessionChanges(ctx),
      ...makeCheckoutCompletion(ctx),
      settlePayment: (sessionId) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => settlePendingPayment(sessionId, now, { ignoreGrace: true }))
    })
  })
)
