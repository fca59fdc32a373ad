/** Pure pricing (CONTRACT §4), in integer minor units through `money.ts`. */
import { type CatalogSnapshot, type Product, taxRatePpm, type TaxRule } from "../../catalog/model/catalog.ts"
import { type Address, type FulfillmentOption } from "../../catalog/model/fulfillment.ts"
import { type Item, type LineItem, type Total } from "../../catalog/model/line-items.ts"
import { multiplyAmount, roundHalfUp, subtractAmount, sumAmounts } from "../../shared/money.ts"

/** A rule of the address's country and `state` beats the country-only rule; the first of each kind wins. */
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

/** The rule's rate for the product's tax category, else its rate. */
export const productTaxRatePpm = (rule: TaxRule | undefined, product: Product): number => {
  if (rule === undefined) return 0
  const override = product.tax_category === undefined ? undefined : rule.category_rates?.[product.tax_category]
  return taxRatePpm(override ?? rule.rate)
}

export const shippingTaxRatePpm = (rule: TaxRule | undefined): number =>
  rule !== undefined && rule.shipping_taxable ? taxRatePpm(rule.rate) : 0

export interface LineInput {
  readonly id: string
  readonly item: Item
  readonly product: Product
}

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

/** `discounts[i]` must not exceed line `i`'s base amount (a `RangeError`: the allocator's bug). */
export const priceLineItems = (
  lines: ReadonlyArray<LineInput>,
  rule: TaxRule | undefined,
  discounts: ReadonlyArray<number> = []
): ReadonlyArray<LineItem> => lines.map((line, i) => priceLineItem(line, rule, discounts[i] ?? 0))

const DAY_MS = 86_400_000

const isWeekend = (epochMs: number): boolean => {
  const day = new Date(epochMs).getUTCDay()
  return day === 0 || day === 6
}

/** Monday to Friday, UTC, keeping the time of day: Friday + 1 and Saturday + 1 are Monday. */
export const addBusinessDays = (epochMs: number, days: number): number => {
  let t = epochMs
  for (let added = 0; added < days; added++) {
    t += DAY_MS
    while (isWeekend(t)) t += DAY_MS
  }
  return t
}

export const shipsTo = (catalog: CatalogSnapshot, country: string): boolean =>
  catalog.shippingMethods.some((method) => method.countries.includes(country.toUpperCase()))

export interface FulfillmentInput {
  readonly catalog: CatalogSnapshot
  readonly products: ReadonlyArray<Product>
  readonly address: Pick<Address, "country"> | undefined
  readonly rule: TaxRule | undefined
  /** Epoch ms. */
  readonly now: number
}

/** The digital option alone when every item is digital, else the shipping methods serving the address. */
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

/** The first of equals. */
export const cheapestOption = (options: ReadonlyArray<FulfillmentOption>): FulfillmentOption | undefined =>
  options.reduce<FulfillmentOption | undefined>(
    (best, option) => (best === undefined || option.total < best.total ? option : best),
    undefined
  )

/** In contract order; `fulfillment` is pre-tax, its tax in `tax`. */
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
