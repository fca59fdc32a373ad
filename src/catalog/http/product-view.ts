/** A stored product as the Products API shows it, its ETag, and the `If-Match` a write names. */
import type { ProductWithStock } from "../product-store.ts"
import type { ProductView } from "./api.ts"

const iso = (millis: number) => new Date(millis).toISOString()

export const productView = ({ product, stock }: ProductWithStock, currency: string): ProductView => ({
  id: product.id,
  title: product.title,
  ...product.details,
  variants: product.variants.map((variant) => {
    const level = stock.get(variant.id) ?? { onHand: 0, reserved: 0 }
    return {
      id: variant.id,
      title: variant.title ?? product.title,
      unit_amount: variant.unit_amount,
      ...(variant.list_amount === undefined ? {} : { list_amount: variant.list_amount }),
      currency,
      availability: variant.availability,
      ...(variant.tax_category === undefined ? {} : { tax_category: variant.tax_category }),
      kind: variant.kind,
      option_values: variant.option_values,
      barcodes: variant.barcodes,
      archived: product.archivedAt !== undefined || variant.archivedAt !== undefined,
      stock: {
        on_hand: level.onHand,
        reserved: level.reserved,
        available: Math.max(0, level.onHand - level.reserved)
      }
    }
  }),
  archived: product.archivedAt !== undefined,
  archived_at: product.archivedAt === undefined ? null : iso(product.archivedAt),
  version: product.version,
  created_at: iso(product.createdAt),
  updated_at: iso(product.updatedAt)
})

/** A strong ETag: the version, quoted. */
export const etagOf = (version: number): string => `"${version}"`

/**
 * The version a write is conditional on: undefined without `If-Match` or with `*` (the product exists:
 * its 404 says otherwise); -1, matching none, for a tag that is not one of ours.
 */
export const ifMatchVersion = (header: string | undefined): number | undefined => {
  if (header === undefined || header.trim() === "*") return undefined
  const tags = header.split(",").map((tag) => tag.trim())
  for (const tag of tags) {
    const match = /^"(\d{1,9})"$/.exec(tag)
    if (match !== null) return Number(match[1])
  }
  return -1
}

export const encodeCursor = (id: string): string => Buffer.from(id, "utf8").toString("base64url")

export const decodeCursor = (cursor: string): string | undefined => {
  const id = Buffer.from(cursor, "base64url").toString("utf8")
  return id === "" || encodeCursor(id) !== cursor ? undefined : id
}
