/**
 * What every checkout use case works with. The catalog is the live one's latest snapshot (an in-memory
 * read), as the payment provider lets it be offered; each reducer context holds the snapshot it was made of.
 */
import { Data, Effect, Option } from "effect"
import { Catalog } from "../catalog/catalog-service.ts"
import type { CatalogSnapshot } from "../catalog/model/catalog.ts"
import type { StorageError } from "../db/storage-error.ts"
import { OrderEvents, type OrderEventsShape } from "../orders/order-service.ts"
import { offeredCatalog, supportOf } from "../payments/model/offered-catalog.ts"
import { PaymentProvider, type PaymentProviderService } from "../payments/payment-provider.ts"
import { AppConfig, type AppConfigShape } from "../platform/config.ts"
import { Ids, type IdsService } from "../platform/ids.ts"
import { CheckoutStore, type CheckoutStoreService } from "./checkout-store.ts"
import { relevantCoupons } from "./pricing/discounts.ts"
import { SessionNotFound } from "./session/errors.ts"
import type { ReducerContext } from "./session/session.ts"

export interface CheckoutContext {
  readonly store: CheckoutStoreService
  /** The latest snapshot: read it once per decision. */
  readonly catalog: CatalogSnapshot
  readonly config: AppConfigShape
  readonly ids: IdsService
  readonly payments: PaymentProviderService
  readonly orderEvents: OrderEventsShape
  /** No stock is available unless given. */
  readonly reducerContext: (
    now: number,
    available?: ReducerContext["available"],
    redemptions?: ReadonlyMap<string, number>,
    pricedAt?: number
  ) => ReducerContext
  /** Of the coupons `codes` name and the automatic ones, other sessions' live holds included. */
  readonly couponUsage: (
    codes: ReadonlyArray<string>,
    now: number,
    sessionId: string,
    lock: boolean
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageError>
}

/** What a store read found, or `SessionNotFound`. */
export const found = <A, E>(id: string, read: Effect.Effect<Option.Option<A>, E>) =>
  Effect.flatMap(read, Option.match({ onNone: () => Effect.fail(new SessionNotFound({ id })), onSome: Effect.succeed }))

/** The merchant's catalog names a payment handler this deployment cannot charge (a start-up failure). */
export class PaymentHandlerUnavailable extends Data.TaggedError("PaymentHandlerUnavailable")<{
  readonly handlerId: string
  readonly psp: string
  readonly needs: string
}> {
  override get message() {
    return `NODE_ENV=production: the catalog's payment handler ${this.handlerId} (psp ${this.psp}) needs ${this.needs} to be set`
  }
}

export const makeCheckoutContext = Effect.gen(function*() {
  const store = yield* CheckoutStore
  const payments = yield* PaymentProvider
  const config = yield* AppConfig
  const liveCatalog = yield* Catalog
  const merchantCatalog = liveCatalog.latest()
  // Elsewhere a handler that cannot be charged is left out of what is offered (the demo catalog's
  // Stripe handler without a key); a merchant's own catalog in production must be honoured in full.
  if (config.production && Option.isSome(config.catalogFile)) {
    for (const handler of merchantCatalog.paymentHandlers) {
      const support = supportOf(payments, handler)
      if (!support.offered) {
        return yield* new PaymentHandlerUnavailable({ handlerId: handler.id, psp: handler.psp, needs: support.needs })
      }
    }
  }
  // Payment handlers are the file's: what is offered changes only with the products.
  let offered = { of: merchantCatalog, catalog: offeredCatalog(merchantCatalog, payments) }
  const current = (): CatalogSnapshot => {
    const latest = liveCatalog.latest()
    if (latest !== offered.of) offered = { of: latest, catalog: { ...offered.catalog, products: latest.products } }
    return offered.catalog
  }
  const context: CheckoutContext = {
    store,
    get catalog() {
      return current()
    },
    config,
    ids: yield* Ids,
    payments,
    orderEvents: yield* OrderEvents,
    reducerContext: (now, available = new Map(), redemptions, pricedAt) => ({
      catalog: current(),
      now,
      sessionTtlSeconds: config.sessionTtlSeconds,
      available,
      redemptions,
      pricedAt
    }),
    couponUsage: (codes, now, sessionId, lock) => {
      const ids = relevantCoupons(current().coupons, codes).map((coupon) => coupon.id)
      return ids.length === 0
        ? Effect.succeed(new Map<string, number>())
        : store.coupons.usage(ids, now, sessionId, lock)
    }
  }
  return context
})
