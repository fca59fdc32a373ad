/**
 * Pure pricing (CONTRACT §4): tax rule resolution, line items, fulfillment options and totals.
 * All arithmetic is on integer minor units through `money.ts`.
 */
import { type CatalogSnapshot, type Product, taxRatePpm, type TaxRule } from "../../catalog/model/catalog.ts"
import { type Address, type FulfillmentOption } from "../../catalog/model/fulfillment.ts"
import { type Item, type LineItem, type Total } from "../../catalog/model/line-items.ts"
import { multiplyAmount, roundHalfUp, subtractAmount, sumAmounts } from "../../shared/money.ts"

// ---------------------------------------------------------------------------------------------
// Tax

/**
 * The tax rule for an address: a rule of the address's country whose region equals the address
 * `state` (case-insensitively, surrounding spaces ignored) beats the country-only rule; the first
 * matching rule of each kind wins. No address or no matching rule → `undefined` (rate 0).
 */
export const resolveTaxRule = (
  rules: ReadonlyArray<TaxRule>,
  address: Pick<Address, "country" | "state"> | undefined
): TaxRule | undefined => {
  if (address === undefined) return undefined
  const country = address.country.toUpperCase()
  const region = address.state.trim().toUpperCase()
  const ofCountry = rules.filter((rule) => rule.country.toUpperCase() === country)
  return (
    ofCountry.find((rule) => rule.region !== undefined && rule.region.trim().toUpperCase() === region) ??
      ofCountry.find((rule) => rule.region === undefined)
  )
}

/** Rate in ppm for a product: the rule's override for its tax category, else the rule's rate. */
export const productTaxRatePpm = (rule: TaxRule | undefined, product: Product): number => {
  if (rule === undefined) return 0
  const override = product.tax_category === undefined ? undefined : rule.category_rates?.[product.tax_category]
  return taxRatePpm(override ?? rule.rate)
}

/** Rate in ppm applied to shipping: the rule's rate when it taxes shipping, else 0. */
export const shippingTaxRatePpm = (rule: TaxRule | undefined): number =>
  rule !== undefined && rule.shipping_taxable ? taxRatePpm(rule.rate) : 0

// ---------------------------------------------------------------------------------------------
// Line items

export interface LineInput {
  readonly id: string
  readonly item: Item
  readonly product: Product
}

/** One line: `base = unit × quantity`, `subtotal = base − discount`, `tax` half-up, `total`. */
export const priceLineItem = (line: LineInput, rule: TaxRule | undefined, discount = 0): LineItem => {
  const base_amount = multiplyAmount(line.product.unit_amount, line.item.quantity)
  const subtotal = subtractAmount(base_amount, discount)
  const tax = roundHalfUp(subtotal, productTaxRatePpm(rule, line.product))
  return {
    id: line.id,
    item: { id: line.item.id, quantity: line.item.quantity },
    base_amount,
    discount,
    subtotal,
    tax,
    total: sumAmounts([subtotal, tax])
  }
}

/**
 * Prices every line. `discounts[i]` is the discount allocated to line `i` (missing entries are
 * 0); it must not exceed the line's base amount (a `RangeError` otherwise: the allocator's bug).
 */
export const priceLineItems = (
  lines: ReadonlyArray<LineInput>,
  rule: TaxRule | undefined,
  discounts: ReadonlyArray<number> = []
): ReadonlyArray<LineItem> => lines.map((line, i) => priceLineItem(line, rule, discounts[i] ?? 0))

// ---------------------------------------------------------------------------------------------
// Fulfillment

const DAY_MS = 86_400_000

const isWeekend = (epochMs: number): boolean => {
  const day = new Date(epochMs).getUTCDay()
  return day === 0 || day === 6
}

/**
 * `epochMs` plus `days` business days (Monday to Friday, UTC), keeping the time of day:
 * each added day that falls on a Saturday or Sunday is pushed to the next Monday.
 * Friday + 1 → Monday; Saturday + 1 → Monday; `days = 0` → `epochMs` unchanged.
 */
export const addBusinessDays = (epochMs: number, days: number): number => {
  let t = epochMs
  for (let added = 0; added < days; added++) {
    t += DAY_MS
    while (isWeekend(t)) t += DAY_MS
  }
  return t
}

/** Whether some shipping method serves `country` (compared upper-cased). */
export const shipsTo = (catalog: CatalogSnapshot, country: string): boolean =>
  catalog.shippingMethods.some((method) => method.countries.includes(country.toUpperCase()))

export interface FulfillmentInput {
  readonly catalog: CatalogSnapshot
  /** The product of every cart line (duplicates allowed). */
  readonly products: ReadonlyArray<Product>
  readonly address: Pick<Address, "country"> | undefined
  readonly rule: TaxRule | undefined
  /** Epoch milliseconds. */
  readonly now: number
}

/**
 * The options offered: none for an empty cart; the digital option alone when every item is
 * digital; else, once an address is known, the shipping methods serving its country (catalog
 * order), priced with shipping tax and delivery estimates from `now`; without an address none.
 */
export const fulfillmentOptions = (input: FulfillmentInput): ReadonlyArray<FulfillmentOption> => {
  const { address, catalog, now, products, rule } = input
  if (products.length === 0) return []
  if (products.every((product) => product.kind === "digital")) {
    const { id, subtitle, title } = catalog.digitalOption
    return [{ type: "digital", id, title, subtitle, subtotal: 0, tax: 0, total: 0 }]
  }
  if (address === undefined) return []
  const country = address.country.toUpperCase()
  const shippingRate = shippingTaxRatePpm(rule)
  return catalog.shippingMethods
    .filter((method) => method.countries.includes(country))
    .map((method) => {
      const tax = roundHalfUp(method.amount, shippingRate)
      return {
        type: "shipping",
        id: method.id,
        title: method.title,
        subtitle: method.subtitle,
        carrier: method.carrier,
        earliest_delivery_time: new Date(addBusinessDays(now, method.min_transit_days)).toISOString(),
        latest_delivery_time: new Date(addBusinessDays(now, method.max_transit_days)).toISOString(),
        subtotal: method.amount,
        tax,
        total: sumAmounts([method.amount, tax])
      }
    })
}

/** The option with the lowest total; the first of equals. */
export const cheapestOption = (options: ReadonlyArray<FulfillmentOption>): FulfillmentOption | undefined =>
  options.reduce<FulfillmentOption | undefined>(
    (best, option) => (best === undefined || option.total < best.total ? option : best),
    undefined
  )

// ---------------------------------------------------------------------------------------------
// Totals

/**
 * Totals in contract order: items_base_amount, items_discount (non-zero only), subtotal,
 * fulfillment (when an option is selected), tax, total. `fulfillment` is the option's pre-tax
 * amount; its tax is in `tax`, so `total = subtotal + fulfillment + tax`.
 */
export const computeTotals = (
  lineItems: ReadonlyArray<LineItem>,
  selected: FulfillmentOption | undefined
): ReadonlyArray<Total> => {
  const base = sumAmounts(lineItems.map((line) => line.base_amount))
  const discount = sumAmounts(lineItems.map((line) => line.discount))
  const subtotal = sumAmounts(lineItems.map((line) => line.subtotal))
  const fulfillment = selected?.subtotal ?? 0
  const tax = sumAmounts([...lineItems.map((line) => line.tax), selected?.tax ?? 0])
  const totals: Array<Total> = [{ type: "items_base_amount", display_text: "Items", amount: base }]
  if (discount !== 0) totals.push({ type: "items_discount", display_text: "Discount", amount: discount })
  totals.push({ type: "subtotal", display_text: "Subtotal", amount: subtotal })
  if (selected !== undefined) {
    const display_text = selected.type === "digital" ? "Delivery" : "Shipping"
    totals.push({ type: "fulfillment", display_text, amount: fulfillment })
  }
  totals.push({ type: "tax", display_text: "Tax", amount: tax })
  totals.push({ type: "total", display_text: "Total", amount: sumAmounts([subtotal, fulfillment, tax]) })
  return totals
}
