/**
 * Products and their variants in the database. Every write bumps the catalog's version in the same
 * transaction, so that each process polling `catalogVersion` reloads its catalog after a change.
 * A variant's stock is the `stock` row of its id (on hand; reserved units are the checkouts').
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { Availability, ProductInput, StoredProduct, VariantPatch } from "./model/product.ts"

/** A stored product with its variants' stock levels. */
export interface ProductWithStock {
  readonly product: StoredProduct
  /** By variant id: units on hand, and of those, held by checkouts (a variant without a stock row has 0). */
  readonly stock: ReadonlyMap<string, { readonly onHand: number; readonly reserved: number }>
}

export interface ProductListFilter {
  /** Only products with a variant of this availability. */
  readonly availability?: Availability | undefined
  /** Case-insensitive, in the title, the description or an id; blank: no search. */
  readonly q?: string | undefined
  /** Archived products are left out unless asked for. */
  readonly archived?: boolean | undefined
  /** The id of the last product of the previous page (ascending ids). */
  readonly after?: string | undefined
  readonly limit: number
}

/** Another product has the id, or one of its variants has a variant id of this product. */
export class ProductConflict extends Data.TaggedError("ProductConflict")<{
  readonly reason: "product_exists" | "variant_id_taken"
  readonly id: string
}> {}

export class ProductNotFound extends Data.TaggedError("ProductNotFound")<{
  readonly productId: string
  readonly variantId?: string | undefined
}> {}

/** The product was written since the version the request names (its `If-Match`). */
export class ProductVersionMismatch extends Data.TaggedError("ProductVersionMismatch")<{
  readonly productId: string
  readonly current: number
}> {}

/** A stock level below the units checkouts hold: they could not be sold. */
export class StockBelowReserved extends Data.TaggedError("StockBelowReserved")<{
  readonly variantId: string
  readonly reserved: number
}> {}

/** The stock on hand is not the level the write expected (`expected_stock`): units were sold or set meanwhile. */
export class StockChanged extends Data.TaggedError("StockChanged")<{
  readonly variantId: string
  readonly onHand: number
}> {}

export type ProductWriteError = ProductNotFound | ProductVersionMismatch | StorageError

export interface ProductStoreService {
  /** Runs `effect` atomically; a write inside joins it (an idempotent answer commits with it). */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** Cheap: one row. Changes with every product write. */
  readonly catalogVersion: Effect.Effect<number, StorageError>
  /** Every product, archived ones too, with the catalog version they are of. */
  readonly all: Effect.Effect<
    { readonly version: number; readonly products: ReadonlyArray<StoredProduct> },
    StorageError
  >
  /** The file's products the database does not hold yet (by product id, and none of whose variant ids is taken), with their stock. */
  readonly importSeed: (products: ReadonlyArray<ProductInput>, now: number) => Effect.Effect<number, StorageError>
  readonly list: (filter: ProductListFilter) => Effect.Effect<ReadonlyArray<ProductWithStock>, StorageError>
  readonly get: (id: string) => Effect.Effect<Option.Option<ProductWithStock>, StorageError>
  readonly create: (
    input: ProductInput,
    now: number
  ) => Effect.Effect<ProductWithStock, ProductConflict | StorageError>
  /** `ifVersion` undefined: unconditional. Variants left out are archived. */
  readonly replace: (
    input: ProductInput,
    ifVersion: number | undefined,
    now: number
  ) => Effect.Effect<ProductWithStock, ProductConflict | ProductWriteError>
  readonly patchVariant: (
    productId: string,
    variantId: string,
    patch: VariantPatch,
    ifVersion: number | undefined,
    now: number
  ) => Effect.Effect<ProductWithStock, StockBelowReserved | StockChanged | ProductWriteError>
  /** Archiving an archived product changes nothing. */
  readonly archive: (
    productId: string,
    ifVersion: number | undefined,
    now: number
  ) => Effect.Effect<ProductWithStock, ProductWriteError>
}

export class ProductStore extends Context.Tag("acp/ProductStore")<ProductStore, ProductStoreService>() {}
