/**
 * The Feed API's wire format of ACP 2026-04-17 (the only release defining it). Every object is closed
 * (`additionalProperties: false`): decode with `onExcessProperty: "error"` (`feed-validation.ts`).
 * `feed_update_id` and `Product.last_update_id` are not part of this release (`docs/feeds.md`).
 */
import { Schema } from "effect"
import { isCountry, isCurrency } from "../../../shared/iso-codes.ts"
import { optional } from "../../../shared/schema-helpers.ts"

export const FEED_API_VERSION = "2026-04-17"

/** Ids are storage keys and path segments: non-empty and bounded, stricter than the schema's bare string. */
export const MAX_ID_LENGTH = 255

const Id = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MAX_ID_LENGTH, { message: () => `must be at most ${MAX_ID_LENGTH} characters` })
)

/** `format: uri`: an absolute URI (a scheme and what follows it). */
const Uri = Schema.String.pipe(
  Schema.filter(
    (value) => (/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(value) && URL.canParse(value)) || "must be an absolute URI",
    { jsonSchema: { format: "uri" } }
  )
)

const MinorUnits = Schema.Int.pipe(
  Schema.nonNegative({ message: () => "must be a non-negative integer amount in minor units" })
)

/** `^[A-Z]{3}$`, and an assigned ISO 4217 code. */
const Currency = Schema.String.pipe(
  Schema.filter(
    (value) =>
      (/^[A-Z]{3}$/.test(value) && isCurrency(value.toLowerCase())) || "must be an uppercase ISO 4217 currency code",
    { jsonSchema: { pattern: "^[A-Z]{3}$" } }
  )
)

/** `^[A-Z]{2}$`, and an assigned ISO 3166-1 alpha-2 code. */
export const TargetCountry = Schema.String.pipe(
  Schema.filter(
    (value) => (/^[A-Z]{2}$/.test(value) && isCountry(value)) || "must be an ISO 3166-1 alpha-2 country code",
    { jsonSchema: { pattern: "^[A-Z]{2}$" } }
  )
)

export const Description = Schema.Struct({
  plain: optional(Schema.String),
  html: optional(Schema.String),
  markdown: optional(Schema.String)
}).pipe(
  Schema.filter((description) => Object.keys(description).length > 0 || "must have plain, html or markdown")
).annotations({ identifier: "FeedDescription" })

export const Price = Schema.Struct({ amount: MinorUnits, currency: Currency }).annotations({
  identifier: "FeedPrice"
})

export const Availability = Schema.Struct({
  available: optional(Schema.Boolean),
  /** Extensible: in_stock, limited_stock, backorder, preorder, out_of_stock, discontinued, or another. */
  status: optional(Schema.String)
}).annotations({ identifier: "FeedAvailability" })

export const Barcode = Schema.Struct({ type: Schema.String, value: Schema.String }).annotations({
  identifier: "FeedBarcode"
})

export const Media = Schema.Struct({
  type: Schema.String,
  url: Uri,
  alt_text: optional(Schema.String),
  width: optional(Schema.Int),
  height: optional(Schema.Int)
}).annotations({ identifier: "FeedMedia" })

export const VariantOption = Schema.Struct({ name: Schema.String, value: Schema.String }).annotations({
  identifier: "FeedVariantOption"
})

export const Category = Schema.Struct({ value: Schema.String, taxonomy: optional(Schema.String) }).annotations({
  identifier: "FeedCategory"
})

export const Link = Schema.Struct({ type: Schema.String, title: optional(Schema.String), url: Uri }).annotations({
  identifier: "FeedLink"
})

export const Seller = Schema.Struct({ name: optional(Schema.String), links: optional(Schema.Array(Link)) })
  .annotations({ identifier: "FeedSeller" })

export const Condition = Schema.Array(Schema.String).annotations({ identifier: "FeedCondition" })

export const Measure = Schema.Struct({ value: Schema.Number, unit: Schema.String }).annotations({
  identifier: "FeedMeasure"
})

export const ReferenceMeasure = Schema.Struct({ value: Schema.Int, unit: Schema.String }).annotations({
  identifier: "FeedReferenceMeasure"
})

export const UnitPrice = Schema.Struct({
  amount: MinorUnits,
  currency: Currency,
  measure: Measure,
  reference: ReferenceMeasure
}).annotations({ identifier: "FeedUnitPrice" })

export const Variant = Schema.Struct({
  id: Id,
  title: Schema.String,
  description: optional(Description),
  url: optional(Uri),
  barcodes: optional(Schema.Array(Barcode)),
  price: optional(Price),
  list_price: optional(Price),
  unit_price: optional(UnitPrice),
  availability: optional(Availability),
  categories: optional(Schema.Array(Category)),
  condition: optional(Condition),
  variant_options: optional(Schema.Array(VariantOption)),
  media: optional(Schema.Array(Media)),
  seller: optional(Seller),
  marketplace: optional(Seller)
}).annotations({ identifier: "FeedVariant" })
export type Variant = typeof Variant.Type

export const Product = Schema.Struct({
  id: Id,
  title: optional(Schema.String),
  description: optional(Description),
  url: optional(Uri),
  media: optional(Schema.Array(Media)),
  variants: Schema.Array(Variant)
}).annotations({ identifier: "FeedProduct" })
export type Product = typeof Product.Type

export const FeedMetadata = Schema.Struct({
  id: Schema.String,
  target_country: optional(Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/))),
  updated_at: optional(Schema.String.annotations({ jsonSchema: { format: "date-time" } }))
}).annotations({ identifier: "FeedMetadata" })
export type FeedMetadata = typeof FeedMetadata.Type

export const CreateFeedRequest = Schema.Struct({ target_country: optional(TargetCountry) }).annotations({
  identifier: "CreateFeedRequest"
})
export type CreateFeedRequest = typeof CreateFeedRequest.Type

export const ProductsResponse = Schema.Struct({ products: Schema.Array(Product) }).annotations({
  identifier: "ProductsResponse"
})
export type ProductsResponse = typeof ProductsResponse.Type

export const UpsertProductsRequest = Schema.Struct({ products: Schema.Array(Product) }).annotations({
  identifier: "UpsertProductsRequest"
})
export type UpsertProductsRequest = typeof UpsertProductsRequest.Type

export const UpsertProductsResponse = Schema.Struct({ id: Schema.String, accepted: Schema.Boolean }).annotations({
  identifier: "UpsertProductsResponse"
})
export type UpsertProductsResponse = typeof UpsertProductsResponse.Type

/** The feed's flat error object: `param` is a JSONPath here (`$.products[0].variants[1].price`). */
export const FeedErrorBody = Schema.Struct({
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  param: optional(Schema.String)
}).annotations({ identifier: "FeedError" })
export type FeedErrorBody = typeof FeedErrorBody.Type
