/** The sellable items of a catalog snapshot: every variant of every product, by variant id. */
import type { CatalogSnapshot, Product } from "./catalog.ts"
import { isSold, type ProductInput, type StoredProduct } from "./product.ts"

const itemOf = (product: StoredProduct, variant: StoredProduct["variants"][number], stock: number): Product => ({
  id: variant.id,
  title: variant.title ?? product.title,
  unit_amount: variant.unit_amount,
  kind: variant.kind,
  ...(variant.tax_category === undefined ? {} : { tax_category: variant.tax_category }),
  stock,
  product_id: product.id,
  ...(isSold(product, variant)
    ? {}
    : {
      unavailable: product.archivedAt !== undefined || variant.archivedAt !== undefined ? "archived" : "out_of_stock"
    })
})

/** `seed` states the initial stock of the file's variants (0 for any other). */
export const itemsOf = (
  products: ReadonlyArray<StoredProduct>,
  seed: ReadonlyArray<ProductInput>
): ReadonlyMap<string, Product> => {
  const stock = new Map(seed.flatMap((input) => input.variants.map((variant) => [variant.id, variant.stock ?? 0])))
  const items = new Map<string, Product>()
  for (const product of products) {
    for (const variant of product.variants) items.set(variant.id, itemOf(product, variant, stock.get(variant.id) ?? 0))
  }
  return items
}

/** `snapshot` selling what the database holds. */
export const withProducts = (snapshot: CatalogSnapshot, products: ReadonlyArray<StoredProduct>): CatalogSnapshot => ({
  ...snapshot,
  products: itemsOf(products, snapshot.seed)
})
