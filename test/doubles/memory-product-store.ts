/**
 * `ProductStore` in memory, on the memory database the checkout store's stock and reservations are on
 * (its `stock` and `reservations` tables): the same rules as `src/catalog/store/sql-product-store.ts`.
 */
import { Effect, Layer, Option } from "effect"
import {
  patchedVariant,
  type ProductInput,
  type StoredProduct,
  storedProduct
} from "../../src/catalog/model/product.ts"
import {
  ProductConflict,
  ProductNotFound,
  ProductStore,
  type ProductStoreService,
  ProductVersionMismatch,
  type ProductWithStock,
  StockBelowReserved,
  StockChanged
} from "../../src/catalog/product-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

export const make: Effect.Effect<ProductStoreService, never, MemoryDatabase> = Effect.map(MemoryDatabase, (db) => {
  const products = db.table<string, StoredProduct>("products")
  /** Variant id → product id. */
  const variantOwners = db.table<string, string>("product_variants")
  const version = db.table<"catalog", number>("catalog_version")
  const stock = db.table<string, number>("stock")
  const reservations = db.table<string, ReadonlyMap<string, { readonly quantity: number }>>("reservations")

  const reservedOf = (variantId: string) => {
    let units = 0
    for (const rows of reservations.values()) units += rows.get(variantId)?.quantity ?? 0
    return units
  }
  const withStock = (product: StoredProduct): ProductWithStock => ({
    product: structuredClone(product),
    stock: new Map(
      product.variants.map((variant) => [variant.id, {
        onHand: stock.get(variant.id) ?? 0,
        reserved: reservedOf(variant.id)
      }])
    )
  })
  const bump = () => version.set("catalog", (version.get("catalog") ?? 0) + 1)

  const write = (product: StoredProduct, input?: ProductInput): Effect.Effect<void, ProductConflict> => {
    for (const variant of product.variants) {
      const owner = variantOwners.get(variant.id)
      if (owner !== undefined && owner !== product.id) {
        return Effect.fail(new ProductConflict({ reason: "variant_id_taken", id: variant.id }))
      }
    }
    for (const variant of product.variants) variantOwners.set(variant.id, product.id)
    for (const variant of input?.variants ?? []) if (!stock.has(variant.id)) stock.set(variant.id, variant.stock ?? 0)
    products.set(product.id, structuredClone(product))
    return Effect.void
  }

  const insert = (input: ProductInput, now: number) => {
    if (products.has(input.id)) return Effect.fail(new ProductConflict({ reason: "product_exists", id: input.id }))
    const product = storedProduct(input, now)
    return Effect.as(write(product, input), product)
  }

  const locked = (
    productId: string,
    ifVersion: number | undefined,
    variantId?: string
  ): Effect.Effect<StoredProduct, ProductNotFound | ProductVersionMismatch> => {
    const product = products.get(productId)
    if (product === undefined) return Effect.fail(new ProductNotFound({ productId }))
    if (ifVersion !== undefined && product.version !== ifVersion) {
      return Effect.fail(new ProductVersionMismatch({ productId, current: product.version }))
    }
    if (variantId !== undefined && !product.variants.some((variant) => variant.id === variantId)) {
      return Effect.fail(new ProductNotFound({ productId, variantId }))
    }
    return Effect.succeed(product)
  }

  const written = <E>(f: () => Effect.Effect<StoredProduct, E>) =>
    db.atomic(() =>
      Effect.map(f(), (product) => {
        bump()
        return withStock(products.get(product.id)!)
      })
    )

  return {
    transaction: db.transaction,
    catalogVersion: db.sync(() => version.get("catalog") ?? 0),
    all: db.sync(() => ({
      version: version.get("catalog") ?? 0,
      products: [...products.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((p) => structuredClone(p))
    })),
    importSeed: (inputs, now) =>
      db.atomic(() => {
        let imported = 0
        for (const input of inputs) {
          if (products.has(input.id) || input.variants.some((variant) => variantOwners.has(variant.id))) continue
          const product = storedProduct(input, now)
          for (const variant of product.variants) variantOwners.set(variant.id, product.id)
          for (const variant of input.variants) if (!stock.has(variant.id)) stock.set(variant.id, variant.stock ?? 0)
          products.set(product.id, product)
          imported++
        }
        if (imported > 0) bump()
        return Effect.succeed(imported)
      }),
    list: (filter) =>
      db.sync(() => {
        const q = filter.q?.trim().toLowerCase()
        const matches = (product: StoredProduct) =>
          q === undefined || q === "" ||
          [product.id, product.title, product.details.description ?? "", ...product.variants.map((v) => v.id)]
            .some((text) => text.toLowerCase().includes(q))
        return [...products.values()]
          .filter((product) => filter.after === undefined || product.id > filter.after)
          .filter((product) => filter.archived === true || product.archivedAt === undefined)
          .filter(matches)
          .filter((product) =>
            filter.availability === undefined ||
            product.variants.some((v) => v.archivedAt === undefined && v.availability === filter.availability)
          )
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .slice(0, Math.max(0, filter.limit))
          .map(withStock)
      }),
    get: (id) => db.sync(() => Option.map(Option.fromNullable(products.get(id)), withStock)),
    create: (input, now) => written(() => insert(input, now)),
    replace: (input, ifVersion, now) =>
      written(() =>
        Effect.flatMap(locked(input.id, ifVersion), (previous) => {
          const product = storedProduct(input, now, previous)
          return Effect.as(write(product, input), product)
        })
      ),
    patchVariant: (productId, variantId, patch, ifVersion, now) =>
      written(() =>
        Effect.flatMap(locked(productId, ifVersion, variantId), (previous): Effect.Effect<
          StoredProduct,
          StockChanged | StockBelowReserved
        > => {
          const onHand = stock.get(variantId) ?? 0
          if (patch.stock !== undefined && patch.expected_stock !== undefined && patch.expected_stock !== onHand) {
            return Effect.fail(new StockChanged({ variantId, onHand }))
          }
          if (patch.stock !== undefined && patch.stock < reservedOf(variantId)) {
            return Effect.fail(new StockBelowReserved({ variantId, reserved: reservedOf(variantId) }))
          }
          const product: StoredProduct = {
            ...previous,
            variants: previous.variants.map((v) => (v.id === variantId ? patchedVariant(v, patch) : v)),
            version: previous.version + 1,
            updatedAt: now
          }
          if (patch.stock !== undefined) stock.set(variantId, patch.stock)
          products.set(productId, product)
          return Effect.succeed(product)
        })
      ),
    archive: (productId, ifVersion, now) =>
      written(() =>
        Effect.map(locked(productId, ifVersion), (previous) => {
          if (previous.archivedAt !== undefined) return previous
          const product = { ...previous, archivedAt: now, version: previous.version + 1, updatedAt: now }
          products.set(productId, product)
          return product
        })
      )
  }
})

export const MemoryProductStore: Layer.Layer<ProductStore, never, MemoryDatabase> = Layer.effect(ProductStore, make)
