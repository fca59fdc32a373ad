/**
 * The merchant's Products API (merchant keys only): products and their variants, paged by cursor.
 * Reads carry an `ETag` (the product's version); a write with `If-Match` of another version is 412.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiHeaders, Limit } from "../../platform/http/api-headers.ts"
import { ConflictWire, NotFoundWire, PreconditionFailedWire, UnprocessableWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { Idempotent } from "../../platform/http/route-declarations.ts"
import { ApiVersion, MerchantAuthorization } from "../../platform/http/security.ts"
import { CurrencyCode, optional, Timestamp } from "../../shared/schema-helpers.ts"
import { StorableString } from "../../shared/storable-text.ts"
import {
  Availability,
  Barcode,
  Condition,
  Media,
  OptionValue,
  ProductInput,
  ProductKind,
  ProductOption,
  Seller,
  VariantPatch
} from "../model/product.ts"

export const VariantStock = Schema.Struct({
  on_hand: Schema.Int,
  /** Of those on hand, held by open checkout sessions. */
  reserved: Schema.Int,
  available: Schema.Int
}).annotations({ identifier: "VariantStock" })

export const VariantView = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  unit_amount: Schema.Int,
  list_amount: optional(Schema.Int),
  currency: CurrencyCode,
  availability: Availability,
  tax_category: optional(Schema.String),
  kind: ProductKind,
  option_values: Schema.Array(OptionValue),
  barcodes: Schema.Array(Barcode),
  /** An archived variant is no longer sold (it was left out of a rewrite, or its product is archived). */
  archived: Schema.Boolean,
  stock: VariantStock
}).annotations({ identifier: "Variant" })

export const ProductView = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  description: optional(Schema.String),
  url: optional(Schema.String),
  media: optional(Schema.Array(Media)),
  categories: optional(Schema.Array(Schema.String)),
  condition: optional(Condition),
  options: optional(Schema.Array(ProductOption)),
  barcodes: optional(Schema.Array(Barcode)),
  seller: optional(Seller),
  variants: Schema.Array(VariantView),
  archived: Schema.Boolean,
  archived_at: Schema.NullOr(Timestamp),
  /** Counts the product's writes; the `ETag` is this number quoted. */
  version: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Product" })
export type ProductView = typeof ProductView.Type

export const ProductList = Schema.Struct({
  data: Schema.Array(ProductView),
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ProductList" })

const ProductPath = Schema.Struct({ product_id: StorableString })

const WriteHeaders = Schema.Struct({
  ...ApiHeaders.fields,
  "if-match": optional(
    Schema.String.annotations({ description: "The ETag of the product as read: a write of another version is 412" })
  )
})

export class ProductsGroup extends HttpApiGroup.make("products")
  .add(
    HttpApiEndpoint.get("list", "/products")
      .setHeaders(ApiHeaders)
      .setUrlParams(Schema.Struct({
        limit: optional(Limit),
        cursor: optional(StorableString),
        availability: optional(Availability),
        q: optional(Schema.String.pipe(Schema.maxLength(256))),
        archived: optional(Schema.Literal("true", "false"))
      }))
      .addSuccess(ProductList)
      .annotate(
        OpenApi.Description,
        "Products by id; `availability` keeps those with a variant of it, `q` searches titles, descriptions and ids, `archived=true` includes archived ones"
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/products")
      .setHeaders(ApiHeaders)
      .setPayload(ProductInput)
      .addSuccess(ProductView, { status: 201 })
      .annotate(OpenApi.Description, "Adds a product; its variants' `stock` is their stock on hand")
  )
  .add(
    HttpApiEndpoint.get("get", "/products/:product_id")
      .setPath(ProductPath)
      .setHeaders(ApiHeaders)
      .addSuccess(ProductView)
  )
  .add(
    HttpApiEndpoint.put("replace", "/products/:product_id")
      .setPath(ProductPath)
      .setHeaders(WriteHeaders)
      .setPayload(ProductInput)
      .addSuccess(ProductView)
      .annotate(
        OpenApi.Description,
        "Rewrites the product; a variant left out is archived; a new variant's `stock` is taken, an existing one's stock is kept"
      )
  )
  .add(
    HttpApiEndpoint.patch("patchVariant", "/products/:product_id/variants/:variant_id")
      .setPath(Schema.Struct({ product_id: StorableString, variant_id: StorableString }))
      .setHeaders(WriteHeaders)
      .setPayload(VariantPatch)
      .addSuccess(ProductView)
      .annotate(
        OpenApi.Description,
        "Sets a variant's price, list price, availability or stock on hand (never below the units checkouts hold: 422; " +
          "with `expected_stock`, only while that many are on hand: 409 `stock_changed`)"
      )
  )
  .add(
    HttpApiEndpoint.del("archive", "/products/:product_id")
      .setPath(ProductPath)
      .setHeaders(WriteHeaders)
      .addSuccess(ProductView)
      .annotate(OpenApi.Description, "Archives the product: no longer sold, still named by old sessions and orders")
  )
  // One failure mapping serves every route: 404 unknown, 409 ids taken, 412 stale `If-Match`, 422 stock.
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .addError(PreconditionFailedWire)
  .addError(UnprocessableWire)
  .middleware(ApiVersion)
  .middleware(MerchantAuthorization)
  .annotate(Idempotent, true)
  .annotate(OpenApi.Description, "Products (merchant): the catalog's products and variants, their prices and stock")
{}

export const ProductsApi = featureApi(ProductsGroup)
