/** The gaps that keep a session from being paid, as messages. */
import type { CatalogSnapshot } from "../../catalog/model/catalog.ts"
import { type Address, type FulfillmentOption } from "../../catalog/model/fulfillment.ts"
import { type Item } from "../../catalog/model/line-items.ts"
import type { Buyer, Capabilities, MessageError } from "./schemas.ts"
import type { Session } from "./session.ts"

const missing = (param: string, content: string): MessageError => ({
  type: "error",
  code: "missing",
  param,
  content_type: "plain",
  content
})

export interface ReadinessInput {
  readonly itemCount: number
  /** Or of a product no longer in the catalog. */
  readonly physical: boolean
  readonly address: Address | undefined
  readonly options: ReadonlyArray<FulfillmentOption>
  readonly selectedOptionId: string | undefined
  readonly buyer: Buyer | undefined
}

/** In field order; the option only once the items and the address allow options. */
export const readinessMessages = (input: ReadinessInput): ReadonlyArray<MessageError> => {
  const messages: Array<MessageError> = []
  const hasItems = input.itemCount > 0
  if (!hasItems) messages.push(missing("$.items", "Add at least one item to the cart."))
  const needsAddress = input.physical && input.address === undefined
  if (needsAddress) {
    messages.push(missing("$.fulfillment_address", "A shipping address is required for physical items."))
  }
  const selected = input.options.some((option) => option.id === input.selectedOptionId)
  if (hasItems && !needsAddress && !selected) {
    if (input.physical && input.address !== undefined && input.options.length === 0) {
      const country = input.address.country.toUpperCase()
      messages.push({
        type: "error",
        code: "invalid",
        param: "$.fulfillment_address.country",
        content_type: "plain",
        content: `We do not ship to ${country}.`
      })
    } else {
      messages.push(missing("$.fulfillment_option_id", "Select a fulfillment option."))
    }
  }
  if (input.buyer === undefined) {
    messages.push(missing("$.buyer", "Buyer details (first name, last name and email) are required."))
  }
  return messages
}

/**
 * An item the merchant no longer sells (archived, or out of stock at its word): an error at its line,
 * first of the messages, so that completing is refused with `product_unavailable`.
 */
export const unavailableMessages = (items: ReadonlyArray<Item>, catalog: CatalogSnapshot): Array<MessageError> =>
  items.flatMap((item, index): Array<MessageError> => {
    const product = catalog.products.get(item.id)
    if (product?.unavailable === undefined) return []
    return [{
      type: "error",
      code: product.unavailable === "archived" ? "invalid" : "out_of_stock",
      param: `$.line_items[${index}]`,
      content_type: "plain",
      content: product.unavailable === "archived"
        ? `${product.title} is no longer sold.`
        : `${product.title} is out of stock.`
    }]
  })

/** A message of `unavailableMessages`. */
export const isUnavailableItem = (message: MessageError): boolean =>
  (message.code === "invalid" || message.code === "out_of_stock") && (message.param ?? "").startsWith("$.line_items[")

const hasPhysicalItem = (items: ReadonlyArray<Item>, catalog: CatalogSnapshot): boolean =>
  items.some((item) => catalog.products.get(item.id)?.kind !== "digital")

/** From the stored options: nothing re-priced. */
export const readinessOfSession = (session: Session, catalog: CatalogSnapshot): ReadonlyArray<MessageError> => [
  ...unavailableMessages(session.items, catalog),
  ...readinessMessages({
    itemCount: session.items.length,
    physical: hasPhysicalItem(session.items, catalog),
    address: session.fulfillment_address,
    options: session.fulfillment_options,
    selectedOptionId: session.fulfillment_option_id,
    buyer: session.buyer
  })
]

/** The merchant always requires 3ds, the agent did not declare it: a warning, as a card not enrolled can pay. */
export const interventionMessages = (capabilities: Capabilities): ReadonlyArray<MessageError> => {
  const interventions = capabilities.interventions
  if (
    interventions?.enforcement !== "always" || !(interventions.required ?? []).includes("3ds") ||
    interventions.supported.includes("3ds")
  ) return []
  return [{
    type: "error",
    code: "intervention_required",
    param: "$.capabilities.interventions.supported",
    content_type: "plain",
    content:
      "This merchant requires 3-D Secure authentication (3ds), which this agent did not declare it supports; a card that needs it cannot be paid."
  }]
}
