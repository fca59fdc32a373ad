/** The `CatalogSnapshot` of a decoded file, checking the rules the schema cannot express (uniqueness, ranges). */
import { Either } from "effect"
import type { CatalogFile, CatalogSnapshot } from "./catalog.ts"
import { type PaymentHandler } from "./catalog.ts"
import { validateCoupons } from "./coupons.ts"

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

const validate = (file: CatalogFile): Array<string> => {
  const errors: Array<string> = []
  errors.push(...duplicates(file.products, (p) => p.id, (i) => `$.products[${i}].id`, "product id"))
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
  return Either.right({
    currency: file.currency,
    products: new Map(file.products.map((product) => [product.id, product])),
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
