/**
 * The official Feed API schemas of ACP 2026-04-17 (`spec/2026-04-17/json-schema/schema.feed.json`, and
 * `UpsertProductsResponse` from `openapi/openapi.feed.yaml`, which that bundle lacks in this release),
 * written out here independently of the service's own schemas: every object closed, formats checked.
 * `expectOfficial` fails a test whose answer is not exactly one of them.
 */
import { Either, Schema } from "effect"
import { expect } from "vitest"

const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Uri = Schema.String.pipe(Schema.filter((s) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && URL.canParse(s)))
const DateTime = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/),
  Schema.filter((s) => !Number.isNaN(Date.parse(s)))
)
const Currency = Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))
const Minor = Schema.Int.pipe(Schema.nonNegative())

const Description = Schema.Struct({
  plain: optional(Schema.String),
  html: optional(Schema.String),
  markdown: optional(Schema.String)
}).pipe(Schema.filter((d) => Object.keys(d).length >= 1))
const Price = Schema.Struct({ amount: Minor, currency: Currency })
const Availability = Schema.Struct({ available: optional(Schema.Boolean), status: optional(Schema.String) })
const Barcode = Schema.Struct({ type: Schema.String, value: Schema.String })
const Media = Schema.Struct({
  type: Schema.String,
  url: Uri,
  alt_text: optional(Schema.String),
  width: optional(Schema.Int),
  height: optional(Schema.Int)
})
const VariantOption = Schema.Struct({ name: Schema.String, value: Schema.String })
const Category = Schema.Struct({ value: Schema.String, taxonomy: optional(Schema.String) })
const Link = Schema.Struct({ type: Schema.String, title: optional(Schema.String), url: Uri })
const Seller = Schema.Struct({ name: optional(Schema.String), links: optional(Schema.Array(Link)) })
const UnitPrice = Schema.Struct({
  amount: Minor,
  currency: Currency,
  measure: Schema.Struct({ value: Schema.Number, unit: Schema.String }),
  reference: Schema.Struct({ value: Schema.Int, unit: Schema.String })
})
const Variant = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  description: optional(Description),
  url: optional(Uri),
  barcodes: optional(Schema.Array(Barcode)),
  price: optional(Price),
  list_price: optional(Price),
  unit_price: optional(UnitPrice),
  availability: optional(Availability),
  categories: optional(Schema.Array(Category)),
  condition: optional(Schema.Array(Schema.String)),
  variant_options: optional(Schema.Array(VariantOption)),
  media: optional(Schema.Array(Media)),
  seller: optional(Seller),
  marketplace: optional(Seller)
})
const Product = Schema.Struct({
  id: Schema.String,
  title: optional(Schema.String),
  description: optional(Description),
  url: optional(Uri),
  media: optional(Schema.Array(Media)),
  variants: Schema.Array(Variant)
})

export const Official = {
  FeedMetadata: Schema.Struct({
    id: Schema.String,
    target_country: optional(Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/))),
    updated_at: optional(DateTime)
  }),
  CreateFeedRequest: Schema.Struct({ target_country: optional(Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/))) }),
  Product,
  ProductsResponse: Schema.Struct({ products: Schema.Array(Product) }),
  UpsertProductsRequest: Schema.Struct({ products: Schema.Array(Product) }),
  UpsertProductsResponse: Schema.Struct({ id: Schema.String, accepted: Schema.Boolean }),
  Error: Schema.Struct({
    type: Schema.String,
    code: Schema.String,
    message: Schema.String,
    param: optional(Schema.String)
  })
} as const

export type OfficialName = keyof typeof Official

/** Whether `value` is exactly the official `name` (no key missing or extra at any depth). */
export const isOfficial = (name: OfficialName, value: unknown): boolean =>
  Either.isRight(
    Schema.decodeUnknownEither(Official[name] as Schema.Schema<unknown, unknown>, { onExcessProperty: "error" })(
      value
    )
  )

export const expectOfficial = (name: OfficialName, value: unknown) => {
  const decoded = Schema.decodeUnknownEither(Official[name] as Schema.Schema<unknown, unknown>, {
    onExcessProperty: "error"
  })(value)
  if (Either.isLeft(decoded)) {
    expect.fail(`not the official ${name}:\n${decoded.left.message}\n${JSON.stringify(value)}`)
  }
}
