/**
 * The merchant catalog (CONTRACT §4): the file format, decoded at start, and `CatalogSnapshot`, the
 * immutable, indexed form the pure domain functions read.
 */
import { Schema } from "effect"
import { Amount, BoundedString, CurrencyCode, optional } from "../../shared/schema-helpers.ts"
import { CatalogCoupon } from "./coupons.ts"
import { ProductInput, type ProductKind, Stock, UnitAmount } from "./product.ts"

export const LinkType = Schema.Literal("terms_of_use", "privacy_policy", "seller_shop_policies")
export const Link = Schema.Struct({
  type: LinkType,
  url: Schema.String
}).annotations({ identifier: "Link" })
export type Link = typeof Link.Type

export const PaymentHandler = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  spec: Schema.String,
  requires_delegate_payment: Schema.Boolean,
  requires_pci_compliance: Schema.Boolean,
  psp: Schema.String,
  config_schema: Schema.String,
  instrument_schemas: Schema.Array(Schema.String),
  config: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "PaymentHandler" })
export type PaymentHandler = typeof PaymentHandler.Type

export const InterventionCapabilities = Schema.Struct({
  supported: Schema.Array(Schema.String),
  required: optional(Schema.Array(Schema.String)),
  enforcement: optional(Schema.String),
  display_context: optional(Schema.String),
  redirect_context: optional(Schema.String),
  max_redirects: optional(Schema.Int),
  max_interaction_depth: optional(Schema.Int)
}).annotations({ identifier: "InterventionCapabilities" })
export type InterventionCapabilities = typeof InterventionCapabilities.Type

export const ExtensionDeclaration = Schema.Struct({
  name: Schema.String,
  extends: Schema.Array(Schema.String),
  schema: optional(Schema.String),
  spec: optional(Schema.String)
}).annotations({ identifier: "ExtensionDeclaration" })
export type ExtensionDeclaration = typeof ExtensionDeclaration.Type

/** A decimal fraction with at most 6 decimals, e.g. "0.08875" (8.875 %). Kept as parts per million. */
export const TaxRate = Schema.String.pipe(
  Schema.pattern(/^(0(\.\d{1,6})?|1(\.0{1,6})?)$/, {
    message: () => "must be a decimal fraction between 0 and 1 with at most 6 decimals, e.g. \"0.0825\""
  })
).annotations({ identifier: "TaxRate" })

/** Parts per million of a `TaxRate` string: "0.0825" → 82500. */
export const taxRatePpm = (rate: string): number => {
  const [whole, fraction = ""] = rate.split(".")
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, "0"))
}

export { MAX_UNIT_AMOUNT, ProductKind } from "./product.ts"

/**
 * A product of the file: flat (`unit_amount`, `stock`: one variant whose id is the product's) or with
 * `variants`; the richer fields are the Products API's. The file only seeds the database.
 */
export const FileProduct = Schema.Struct({
  ...ProductInput.fields,
  /** Any id a file of the flat format had (the API's own ids are narrower). */
  id: BoundedString(256),
  unit_amount: optional(UnitAmount),
  tax_category: optional(BoundedString(64)),
  stock: optional(Stock),
  variants: optional(ProductInput.fields.variants)
}).annotations({ identifier: "FileProduct" })
export type FileProduct = typeof FileProduct.Type

/** A sellable item of the snapshot: a variant, priced as it is now. Absent `unavailable`: sold. */
export interface Product {
  readonly id: string
  readonly title: string
  readonly unit_amount: number
  readonly kind: ProductKind
  readonly tax_category?: string | undefined
  /** The file's initial stock (0 for a variant the database holds): the database keeps the level. */
  readonly stock: number
  /** The product it is a variant of (its own id for a flat product). */
  readonly product_id?: string | undefined
  readonly unavailable?: "archived" | "out_of_stock" | undefined
}

export const TaxRule = Schema.Struct({
  country: Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/)),
  /** State, province or region; absent means the whole country. Matched case-insensitively. */
  region: optional(BoundedString(128)),
  rate: TaxRate,
  /** Per tax category override of `rate`. */
  category_rates: optional(Schema.Record({ key: Schema.String, value: TaxRate })),
  shipping_taxable: Schema.Boolean
})
export type TaxRule = typeof TaxRule.Type

export const ShippingMethod = Schema.Struct({
  id: BoundedString(256),
  title: BoundedString(256),
  subtitle: Schema.String,
  carrier: BoundedString(128),
  amount: Amount,
  min_transit_days: Schema.Int.pipe(Schema.nonNegative()),
  max_transit_days: Schema.Int.pipe(Schema.nonNegative()),
  /** ISO 3166-1 alpha-2 codes this method ships to. */
  countries: Schema.Array(Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/))).pipe(Schema.minItems(1))
})
export type ShippingMethod = typeof ShippingMethod.Type

export const DigitalOption = Schema.Struct({
  id: BoundedString(256),
  title: BoundedString(256),
  subtitle: Schema.String
})
export type DigitalOption = typeof DigitalOption.Type

export const CatalogFile = Schema.Struct({
  merchant_name: optional(Schema.String),
  currency: CurrencyCode,
  products: Schema.Array(FileProduct).pipe(Schema.minItems(1)),
  tax_rules: Schema.Array(TaxRule),
  shipping_methods: Schema.Array(ShippingMethod),
  digital_option: DigitalOption,
  links: Schema.Array(Link),
  payment_handlers: optional(Schema.Array(PaymentHandler)),
  interventions: optional(InterventionCapabilities),
  extensions: optional(Schema.Array(ExtensionDeclaration)),
  /** The discount extension's coupons (CONTRACT §9). */
  coupons: optional(Schema.Array(CatalogCoupon))
}).annotations({ identifier: "CatalogFile" })
export type CatalogFile = typeof CatalogFile.Type

export interface CatalogSnapshot {
  readonly currency: string
  /** By variant id, archived and unavailable ones too (old sessions and orders name them). */
  readonly products: ReadonlyMap<string, Product>
  /** The file's products, as the Products API states them: imported once each into the database. */
  readonly seed: ReadonlyArray<ProductInput>
  readonly taxRules: ReadonlyArray<TaxRule>
  readonly shippingMethods: ReadonlyArray<ShippingMethod>
  readonly digitalOption: DigitalOption
  readonly links: ReadonlyArray<Link>
  readonly paymentHandlers: ReadonlyArray<PaymentHandler>
  readonly interventions: InterventionCapabilities | undefined
  readonly extensions: ReadonlyArray<ExtensionDeclaration>
  /** Catalog order; empty when the catalog has none (then the discount extension is not declared). */
  readonly coupons: ReadonlyArray<CatalogCoupon>
}
