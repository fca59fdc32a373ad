/**
 * The merchant's products as 2026-04-17 feed `Product`s, for the agent-hosted Feed API and the file
 * form. A variant's id is the item id a checkout names. The Feed API cannot delete, so an archived
 * product or variant is still sent, unavailable and `discontinued`; a variant is available while it
 * is sold and has units free (on hand less those checkouts hold).
 */
import type { Link } from "../../../catalog/model/catalog.ts"
import { isSold, type StoredProduct, type StoredVariant } from "../../../catalog/model/product.ts"
import type { Product, Variant } from "./v2026-04-17.ts"

export interface VariantStock {
  readonly onHand: number
  readonly reserved: number
}

/** What every product of one merchant shares. */
export interface FeedContext {
  /** The catalog's currency (lower case, as the catalog keeps it). */
  readonly currency: string
  readonly merchantName: string | undefined
  readonly links: ReadonlyArray<Link>
}

const LINK_TYPES: Record<Link["type"], string> = {
  terms_of_use: "terms_of_service",
  privacy_policy: "privacy_policy",
  seller_shop_policies: "shop_policies"
}

const availabilityOf = (product: StoredProduct, variant: StoredVariant, stock: VariantStock | undefined) => {
  if (product.archivedAt !== undefined || variant.archivedAt !== undefined) {
    return { available: false, status: "discontinued" }
  }
  if (!isSold(product, variant)) return { available: false, status: "out_of_stock" }
  const free = stock === undefined ? 0 : stock.onHand - stock.reserved
  switch (variant.availability) {
    case "pre_order":
      return { available: true, status: "preorder" }
    case "backorder":
      return { available: true, status: "backorder" }
    default:
      return free > 0 ? { available: true, status: "in_stock" } : { available: false, status: "out_of_stock" }
  }
}

const present = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

const nonEmpty = <A>(list: ReadonlyArray<A> | undefined): ReadonlyArray<A> | undefined =>
  list === undefined || list.length === 0 ? undefined : list

export const feedProductOf = (
  product: StoredProduct,
  stock: ReadonlyMap<string, VariantStock>,
  context: FeedContext
): Product => {
  const details = product.details
  const currency = context.currency.toUpperCase()
  const description = details.description === undefined ? undefined : { plain: details.description }
  const media = nonEmpty(details.media)?.map((item) => ({
    type: item.type,
    url: item.url,
    ...present("alt_text", item.alt_text)
  }))
  const links = nonEmpty(context.links.map((link) => ({ type: LINK_TYPES[link.type], url: link.url })))
  const sellerName = details.seller?.name ?? context.merchantName
  const seller = sellerName === undefined && links === undefined
    ? undefined
    : { ...present("name", sellerName), ...present("links", links) }
  const categories = nonEmpty(details.categories)?.map((value) => ({ value, taxonomy: "merchant" }))
  const variants = product.variants.map((variant): Variant => {
    const barcodes = nonEmpty([...variant.barcodes, ...(details.barcodes ?? [])])
    return {
      id: variant.id,
      title: variant.title ?? product.title,
      ...present("description", description),
      ...present("url", details.url),
      ...present("barcodes", barcodes?.map((barcode) => ({ type: barcode.type, value: barcode.value }))),
      price: { amount: variant.unit_amount, currency },
      ...present(
        "list_price",
        variant.list_amount === undefined ? undefined : { amount: variant.list_amount, currency }
      ),
      availability: availabilityOf(product, variant, stock.get(variant.id)),
      ...present("categories", categories),
      ...present("condition", details.condition === undefined ? undefined : [details.condition]),
      ...present(
        "variant_options",
        nonEmpty(variant.option_values)?.map((option) => ({ name: option.name, value: option.value }))
      ),
      ...present("seller", seller)
    }
  })
  return {
    id: product.id,
    title: product.title,
    ...present("description", description),
    ...present("url", details.url),
    ...present("media", media),
    variants
  }
}
