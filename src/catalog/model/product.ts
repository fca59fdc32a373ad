/**
 * A merchant's product and its variants, as the Products API and the catalog file state them. A
 * variant's id is the item id a checkout names; its price is an integer in minor units.
 */
import { Schema } from "effect"
import { Amount, BoundedString, optional } from "../../shared/schema-helpers.ts"

export const MAX_UNIT_AMOUNT = 100_000_000

/** At most 10^8 minor units, so that no cart total can leave the exact integer range. */
export const UnitAmount = Amount.pipe(
  Schema.lessThanOrEqualTo(MAX_UNIT_AMOUNT, { message: () => `must be at most ${MAX_UNIT_AMOUNT}` })
)

export const ProductKind = Schema.Literal("physical", "digital")
export type ProductKind = typeof ProductKind.Type

/** `out_of_stock` is the merchant's word that a variant is not sold now, whatever its stock. */
export const Availability = Schema.Literal("in_stock", "out_of_stock", "pre_order", "backorder", "unknown")
export type Availability = typeof Availability.Type

export const Condition = Schema.Literal("new", "refurbished", "used")

export const Barcode = Schema.Struct({
  type: Schema.Literal("gtin", "upc", "ean", "isbn", "mpn"),
  value: BoundedString(64)
}).annotations({ identifier: "Barcode" })

export const Media = Schema.Struct({
  type: Schema.Literal("image", "video"),
  url: BoundedString(2048),
  alt_text: optional(BoundedString(512))
}).annotations({ identifier: "Media" })

export const ProductOption = Schema.Struct({
  name: BoundedString(64),
  values: Schema.Array(BoundedString(128)).pipe(Schema.minItems(1), Schema.maxItems(100))
}).annotations({ identifier: "ProductOption" })

export const OptionValue = Schema.Struct({
  name: BoundedString(64),
  value: BoundedString(128)
}).annotations({ identifier: "OptionValue" })

export const Seller = Schema.Struct({
  name: BoundedString(256),
  url: optional(BoundedString(2048))
}).annotations({ identifier: "Seller" })

export const Stock = Schema.Int.pipe(
  Schema.nonNegative({ message: () => "must be a non-negative integer" }),
  Schema.lessThanOrEqualTo(1_000_000_000, { message: () => "must be at most 1000000000" })
)

const Id = BoundedString(256).pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, {
    message: () => "must start with a letter or digit and hold only letters, digits and . _ : -"
  })
)

/** What a variant is, as written; `title` defaults to the product's. */
export const VariantInput = Schema.Struct({
  id: Id,
  title: optional(BoundedString(256)),
  unit_amount: UnitAmount,
  /** The price before a reduction, shown struck through by agents that show one. */
  list_amount: optional(UnitAmount),
  availability: optional(Availability),
  tax_category: optional(BoundedString(64)),
  kind: optional(ProductKind),
  option_values: optional(Schema.Array(OptionValue).pipe(Schema.maxItems(20))),
  barcodes: optional(Schema.Array(Barcode).pipe(Schema.maxItems(20))),
  /** Units on hand; only a new variant's is taken (afterwards `PATCH …/variants/{id}` sets it). */
  stock: optional(Stock)
}).annotations({ identifier: "VariantInput", parseOptions: { onExcessProperty: "error" } })
export type VariantInput = typeof VariantInput.Type

/** What a product is, as `POST /products` and `PUT /products/{id}` write it. */
export const ProductInput = Schema.Struct({
  id: Id,
  title: BoundedString(256),
  description: optional(Schema.String.pipe(Schema.maxLength(5000))),
  url: optional(BoundedString(2048)),
  media: optional(Schema.Array(Media).pipe(Schema.maxItems(20))),
  categories: optional(Schema.Array(BoundedString(256)).pipe(Schema.maxItems(20))),
  condition: optional(Condition),
  options: optional(Schema.Array(ProductOption).pipe(Schema.maxItems(10))),
  barcodes: optional(Schema.Array(Barcode).pipe(Schema.maxItems(20))),
  seller: optional(Seller),
  /** The default of its variants' `kind`. */
  kind: optional(ProductKind),
  variants: Schema.Array(VariantInput).pipe(Schema.minItems(1), Schema.maxItems(100))
}).annotations({ identifier: "ProductInput", parseOptions: { onExcessProperty: "error" } })
export type ProductInput = typeof ProductInput.Type

export interface StoredVariant {
  readonly id: string
  readonly title: string | undefined
  readonly unit_amount: number
  readonly list_amount: number | undefined
  readonly availability: Availability
  readonly tax_category: string | undefined
  readonly kind: ProductKind
  readonly option_values: ReadonlyArray<typeof OptionValue.Type>
  readonly barcodes: ReadonlyArray<typeof Barcode.Type>
  /** Epoch ms; archived variants are no longer sold but still name what old sessions and orders hold. */
  readonly archivedAt: number | undefined
}

/** A product as stored: `version` counts its writes (its ETag); `archivedAt` archives every variant. */
export interface StoredProduct {
  readonly id: string
  readonly title: string
  readonly details: Omit<ProductInput, "id" | "title" | "variants" | "kind">
  readonly variants: ReadonlyArray<StoredVariant>
  readonly version: number
  readonly archivedAt: number | undefined
  readonly createdAt: number
  readonly updatedAt: number
}

/** The stored form of `input`, its variants' defaults filled in; `previous` keeps what a rewrite cannot change. */
export const storedProduct = (
  input: ProductInput,
  now: number,
  previous?: StoredProduct
): StoredProduct => {
  const { id, kind, title, variants, ...details } = input
  const written = variants.map((variant): StoredVariant => ({
    id: variant.id,
    title: variant.title,
    unit_amount: variant.unit_amount,
    list_amount: variant.list_amount,
    availability: variant.availability ?? "in_stock",
    tax_category: variant.tax_category,
    kind: variant.kind ?? kind ?? "physical",
    option_values: variant.option_values ?? [],
    barcodes: variant.barcodes ?? [],
    archivedAt: undefined
  }))
  // A variant a rewrite leaves out is archived, not forgotten: sessions and orders may name it.
  const ids = new Set(written.map((variant) => variant.id))
  const dropped = (previous?.variants ?? []).filter((variant) => !ids.has(variant.id)).map((variant) => ({
    ...variant,
    archivedAt: variant.archivedAt ?? now
  }))
  return {
    id,
    title,
    details,
    variants: [...written, ...dropped],
    version: (previous?.version ?? 0) + 1,
    archivedAt: undefined,
    createdAt: previous?.createdAt ?? now,
    updatedAt: now
  }
}

/** Duplicate variant ids within one product, as messages at their JSONPath. */
export const duplicateVariant = (input: ProductInput): { readonly param: string; readonly id: string } | undefined => {
  const seen = new Set<string>()
  for (const [index, variant] of input.variants.entries()) {
    if (seen.has(variant.id)) return { param: `$.variants[${index}].id`, id: variant.id }
    seen.add(variant.id)
  }
  return undefined
}

/** A variant is sold while neither it nor its product is archived and the merchant does not say out of stock. */
export const isSold = (product: StoredProduct, variant: StoredVariant): boolean =>
  product.archivedAt === undefined && variant.archivedAt === undefined && variant.availability !== "out_of_stock"

/** The change `PATCH /products/{id}/variants/{variant_id}` makes. */
export const VariantPatch = Schema.Struct({
  unit_amount: optional(UnitAmount),
  list_amount: optional(Schema.NullOr(UnitAmount)),
  availability: optional(Availability),
  stock: optional(Stock),
  /** Sets `stock` only while the stock on hand is this: a compare-and-set against sales meanwhile. */
  expected_stock: optional(Stock)
}).annotations({ identifier: "VariantPatch", parseOptions: { onExcessProperty: "error" } })
export type VariantPatch = typeof VariantPatch.Type

export const patchedVariant = (variant: StoredVariant, patch: VariantPatch): StoredVariant => ({
  ...variant,
  ...(patch.unit_amount === undefined ? {} : { unit_amount: patch.unit_amount }),
  ...(patch.list_amount === undefined ? {} : { list_amount: patch.list_amount ?? undefined }),
  ...(patch.availability === undefined ? {} : { availability: patch.availability })
})

/**
 * The input that writes `product` again as it is, `title` changed: its live variants as they are (no
 * stock: a rewrite keeps an existing variant's), so that its archived ones stay archived. Undefined when
 * no variant is live (a product input names at least one).
 */
export const rewriteInput = (product: StoredProduct, title: string): ProductInput | undefined => {
  const live = product.variants.filter((variant) => variant.archivedAt === undefined)
  if (live.length === 0) return undefined
  const details = Object.fromEntries(
    Object.entries(product.details).filter(([, value]) => value !== undefined)
  ) as StoredProduct["details"]
  return {
    ...details,
    id: product.id,
    title,
    variants: live.map((variant): VariantInput => ({
      id: variant.id,
      ...(variant.title === undefined ? {} : { title: variant.title }),
      unit_amount: variant.unit_amount,
      ...(variant.list_amount === undefined ? {} : { list_amount: variant.list_amount }),
      availability: variant.availability,
      ...(variant.tax_category === undefined ? {} : { tax_category: variant.tax_category }),
      kind: variant.kind,
      option_values: variant.option_values,
      barcodes: variant.barcodes
    }))
  }
}
