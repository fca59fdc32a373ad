/**
 * Checkout sessions: the `CheckoutService` the handlers call, assembled from its use cases —
 * `session-changes.ts` (create, read, update, cancel, expire) and
 * `completion.ts` (complete) — over the `CheckoutStore`. At start it seeds the
 * stock and the coupons' redemption counts of products and coupons the store does not know yet.
 */
import { Context, Effect, Layer } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import { makeCheckoutContext } from "./checkout-context.ts"
import { type CompleteError, makeCheckoutCompletion } from "./completion.ts"
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
  /**
   * `get`, answered as the session's wire form in JSON text: the store's own serialization when
   * the session shows as stored (one statement, nothing decoded), the view of `get` serialized
   * when it must show expired.
   */
  readonly getJson: (id: string) => Effect.Effect<string, SessionNotFound | StorageError>
  readonly update: (
    id: string,
    request: UpdateSessionInput
  ) => Effect.Effect<Session, ReducerError | PaymentInProgress | SessionNotFound | StorageError>
  /**
   * The completed session with its `order`, or the session in `authentication_required` (the card
   * needs issuer authentication; nothing charged, stock still held).
   */
  readonly complete: (id: string, request: CompleteSessionInput) => Effect.Effect<Session, CompleteError>
  readonly cancel: (
    id: string,
    request?: CancelSessionInput
  ) => Effect.Effect<Session, SessionFinal | PaymentInProgress | SessionNotFound | StorageError>
  /** Marks sessions idle past their TTL as expired and releases their stock; returns how many. */
  readonly expireDue: (limit: number) => Effect.Effect<number, StorageError>
}

export class CheckoutService extends Context.Tag("acp/CheckoutService")<CheckoutService, CheckoutServiceShape>() {}

export const CheckoutServiceLive = Layer.effect(
  CheckoutService,
  Effect.gen(function*() {
    const ctx = yield* makeCheckoutContext
    const { catalog, store } = ctx
    // The catalog file seeds stock for products the database does not know yet.
    yield* store.inventory.seedStock(
      [...catalog.products.values()].map((product) => ({ id: product.id, stock: product.stock }))
    )
    // Likewise the coupons' redemption counts (discount extension).
    yield* store.coupons.seed(
      catalog.coupons.map((coupon) => ({ id: coupon.id, timesRedeemed: coupon.times_redeemed ?? 0 }))
    )
    return CheckoutService.of({ ...makeSessionChanges(ctx), ...makeCheckoutCompletion(ctx) })
  })
)
