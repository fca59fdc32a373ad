/** The `CatalogSnapshot` of a decoded file, checking the rules the schema cannot express (uniqueness, ranges). */
import { Either } from "effect"
import { itemsOf } from "./catalog-items.ts"
import type { CatalogFile, CatalogSnapshot, FileProduct } from "./catalog.ts"
import { type PaymentHandler } from "./catalog.ts"
import { validateCoupons } from "./coupons.ts"
import { type ProductInput, storedProduct } from "./product.ts"

/** The card handler offered when the catalog declares none (CONTRACT §7). */
export const DEFAULT_PAYMENT_HANDLER: PaymentHandler = {
  id: "card_tokenized",
  name: "dev.proto.tokenized.card",
  version: "2026-01-30",
  spec: "https://acp.dev/handlers/dev.proto.tokenized.card/2026-01-30",
  requires_delegate_payment: true,
  requires_pci_compliance: false,
  psp: "acp_vault",
  config_schema: "https://acp.dev/handlers/dev.proto.tokenized.card/2026-01-30/config.schema.json",
  instrument_schemas: ["https://acp.dev/handlers/dev.proto.tokenized.card/2026-01-30/instrument.schema.json"],
  config: {
    accepted_brands: ["visa", "mastercard", "amex", "discover"],
    accepted_funding_types: ["credit", "debit"],
    supports_3ds: false,
    environment: "test"
  }
}

/** One message per value of `key` seen before, naming both JSON paths. */
const duplicates = <A>(
  values: ReadonlyArray<A>,
  key: (value: A) => string,
  path: (index: number) => string,
  what: string
): Array<string> => {
  const firstIndex = new Map<string, number>()
  const errors: Array<string> = []
  values.forEach((value, index) => {
    const k = key(value)
    const first = firstIndex.get(k)
    if (first === undefined) firstIndex.set(k, index)
    else errors.push(`${path(index)}: duplicate ${what} ${JSON.stringify(k)} (first at ${path(first)})`)
  })
  return errors
}

/** A flat product is one variant of the same id; the product's stock is its variants' initial stock. */
export const seedInput = (product: FileProduct): ProductInput & { readonly variants: ProductInput["variants"] } => {
  const { stock, tax_category, unit_amount, variants, ...rest } = product
  return {
    ...rest,
    variants: variants ?? [{
      id: product.id,
      unit_amount: unit_amount ?? 0,
      ...(tax_category === undefined ? {} : { tax_category }),
      stock: stock ?? 0
    }]
  }
}

const validateProducts = (products: ReadonlyArray<FileProduct>): Array<string> => {
  const errors: Array<string> = []
  errors.push(...duplicates(products, (p) => p.id, (i) => `$.products[${i}].id`, "product id"))
  products.forEach((product, i) => {
    if (product.variants !== undefined) return
    if (product.unit_amount === undefined) errors.push(`$.products[${i}].unit_amount: is missing (or give variants)`)
    if (product.stock === undefined) errors.push(`$.products[${i}].stock: is missing (or give variants)`)
  })
  // A duplicate product id is reported once, not again as its variant's.
  if (errors.length > 0) return errors
  const variants = products.flatMap((product, i) =>
    seedInput(product).variants.map((variant, j) => ({
      id: variant.id,
      path: product.variants === undefined ? `$.products[${i}].id` : `$.products[${i}].variants[${j}].id`
    }))
  )
  const paths = variants.map((variant) => variant.path)
  errors.push(...duplicates(variants, (v) => v.id, (k) => paths[k] ?? "$.products", "variant id"))
  return errors
}

const validate = (file: CatalogFile): Array<string> => {
  const errors: Array<string> = []
  errors.push(...validateProducts(file.products))
  errors.push(
    ...duplicates(file.shipping_methods, (m) => m.id, (i) => `$.shipping_methods[${i}].id`, "shipping method id")
  )
  file.shipping_methods.forEach((method, i) => {
    if (method.min_transit_days > method.max_transit_days) {
      errors.push(
        `$.shipping_methods[${i}].min_transit_days: ${method.min_transit_days} is greater than max_transit_days ${method.max_transit_days}`
      )
    }
    if (method.id === file.digital_option.id) {
      errors.push(
        `$.shipping_methods[${i}].id: ${
          JSON.stringify(method.id)
        } is also the id of $.digital_option (fulfillment option ids must be unique)`
      )
    }
  })
  errors.push(
    ...duplicates(
      file.tax_rules,
      (r) => `${r.country}${r.region === undefined ? "" : "/" + r.region.toUpperCase()}`,
      (i) => `$.tax_rules[${i}]`,
      "tax rule for"
    )
  )
  if (file.payment_handlers !== undefined) {
    errors.push(
      ...duplicates(file.payment_handlers, (h) => h.id, (i) => `$.payment_handlers[${i}].id`, "payment handler id")
    )
  }
  errors.push(...validateCoupons(file.coupons ?? [], file.currency))
  return errors
}

/** On failure, every problem found, each prefixed with its JSONPath, joined by "; ". */
export const makeCatalogSnapshot = (file: CatalogFile): Either.Either<CatalogSnapshot, string> => {
  const errors = validate(file)
  if (errors.length > 0) return Either.left(errors.join("; "))
  const seed = file.products.map(seedInput)
  return Either.right({
    currency: file.currency,
    products: itemsOf(seed.map((input) => storedProduct(input, 0)), seed),
    seed,
    taxRules: file.tax_rules,
    shippingMethods: file.shipping_methods,
    digitalOption: file.digital_option,
    links: file.links,
    paymentHandlers: file.payment_handlers ?? [DEFAULT_PAYMENT_HANDLER],
    interventions: file.interventions,
    extensions: file.extensions ?? [],
    coupons: file.coupons ?? []
  })
}
