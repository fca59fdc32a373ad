/**
 * A draft of a session's contents (items, buyer, address, option choice, discount codes) and
 * everything derived from it: line ids, the items' checks, prices, options, totals, readiness.
 */
import { Either } from "effect"
import type { CatalogSnapshot, Product } from "../../catalog/model/catalog.ts"
import { type Address, type FulfillmentOption } from "../../catalog/model/fulfillment.ts"
import { type Item, type LineItem, type Total } from "../../catalog/model/line-items.ts"
import { multiplyAmount } from "../../shared/money.ts"
import { sha256 } from "../../shared/sha256.ts"
import { type Discounts, evaluateDiscounts, type RejectedDiscount } from "../pricing/discounts.ts"
import {
  cheapestOption,
  computeTotals,
  fulfillmentOptions,
  priceLineItems,
  resolveTaxRule
} from "../pricing/pricing.ts"
import { unitsFit } from "./inventory.ts"
import { interventionMessages, readinessMessages } from "./readiness.ts"
import type { Buyer, Message, MessageInfo } from "./schemas.ts"
import {
  OutOfStock,
  pricingTime,
  type ReducerContext,
  type Session,
  UnknownFulfillmentOption,
  UnknownProduct
} from "./session.ts"

// ---------------------------------------------------------------------------------------------
// Items: validation and line ids

/** `li_` + 24 hex chars of sha256(session id, product id, n-th occurrence of that product). */
export const lineItemId = (sessionId: string, productId: string, occurrence: number): string =>
  "li_" + sha256(`${sessionId}\0${productId}\0${occurrence}`).toString("hex", 0, 12)

const lineItemIds = (sessionId: string, items: ReadonlyArray<Item>): ReadonlyArray<string> => {
  const seen = new Map<string, number>()
  return items.map((item) => {
    const occurrence = seen.get(item.id) ?? 0
    seen.set(item.id, occurrence + 1)
    return lineItemId(sessionId, item.id, occurrence)
  })
}

/** The product of each item, or the first unknown product id. */
const productsOf = (
  items: ReadonlyArray<Item>,
  catalog: CatalogSnapshot
): Either.Either<ReadonlyArray<Product>, UnknownProduct> => {
  const products: Array<Product> = []
  for (const [index, item] of items.entries()) {
    const product = catalog.products.get(item.id)
    if (product === undefined) return Either.left(new UnknownProduct({ index, productId: item.id }))
    products.push(product)
  }
  return Either.right(products)
}

/**
 * Requested items: every id known, then the running total per product within what is available
 * to this session; the index reported is the item at which the running total first exceeds.
 * With the stock `unchecked`, only the ids (the store checks the units when it writes them).
 */
export const checkItems = (
  items: ReadonlyArray<Item>,
  ctx: ReducerContext
): Either.Either<void, UnknownProduct | OutOfStock> =>
  Either.flatMap(productsOf(items, ctx.catalog), () => {
    const available = ctx.available
    if (available === "unchecked") return Either.void
    const requested = new Map<string, number>()
    for (const [index, item] of items.entries()) {
      const total = (requested.get(item.id) ?? 0) + item.quantity
      requested.set(item.id, total)
      if (!unitsFit(total, available.get(item.id))) {
        return Either.left(
          new OutOfStock({ index, productId: item.id, requested: total, available: available.get(item.id) ?? 0 })
        )
      }
    }
    return Either.void
  })

// ---------------------------------------------------------------------------------------------
// Pricing a draft: everything derived from items, address, buyer and the option choice

export interface Draft {
  readonly items: ReadonlyArray<Item>
  readonly buyer: Buyer | undefined
  readonly address: Address | undefined
  /** The option selected before; kept while still offered. */
  readonly previousOptionId: string | undefined
  /** The option the request asks for; must be offered. */
  readonly requestedOptionId: string | undefined
  /** Discount codes as sent (the discount extension). */
  readonly codes: ReadonlyArray<string>
}

export interface Priced {
  readonly status: "ready_for_payment" | "not_ready_for_payment"
  readonly line_items: ReadonlyArray<LineItem>
  readonly fulfillment_options: ReadonlyArray<FulfillmentOption>
  readonly selectedOptionId: string | undefined
  readonly totals: ReadonlyArray<Total>
  /** Readiness errors, then one info per rejected discount code. */
  readonly messages: ReadonlyArray<Message>
  /** Absent when the catalog has no coupons and no code was sent. */
  readonly discounts: Discounts | undefined
  /** The rejections with the index of their code (for `DiscountUnavailable`). */
  readonly rejected: ReadonlyArray<RejectedDiscount & { readonly index: number }>
}

/** The info message of a rejected code (param `$.discounts.codes[i]`). */
export const rejectionMessage = (rejected: RejectedDiscount & { readonly index: number }): MessageInfo => ({
  type: "info",
  param: rejected.index >= 0 ? `$.discounts.codes[${rejected.index}]` : "$.discounts",
  content_type: "plain",
  content: rejected.message
})

const selectOption = (
  options: ReadonlyArray<FulfillmentOption>,
  draft: Draft
): Either.Either<FulfillmentOption | undefined, UnknownFulfillmentOption> => {
  const byId = (id: string | undefined) => options.find((option) => option.id === id)
  if (draft.requestedOptionId !== undefined) {
    const requested = byId(draft.requestedOptionId)
    return requested === undefined
      ? Either.left(new UnknownFulfillmentOption({ optionId: draft.requestedOptionId }))
      : Either.right(requested)
  }
  return Either.right(byId(draft.previousOptionId) ?? cheapestOption(options))
}

export const priceDraft = (
  sessionId: string,
  draft: Draft,
  ctx: ReducerContext
): Either.Either<Priced, UnknownProduct | UnknownFulfillmentOption> =>
  Either.flatMap(productsOf(draft.items, ctx.catalog), (products) => {
    const rule = resolveTaxRule(ctx.catalog.taxRules, draft.address)
    const ids = lineItemIds(sessionId, draft.items)
    const lines = draft.items.map((item, i) => ({ id: ids[i] ?? "", item, product: products[i] as Product }))
    const evaluated = evaluateDiscounts({
      coupons: ctx.catalog.coupons,
      codes: draft.codes,
      lineBases: lines.map((line) => multiplyAmount(line.product.unit_amount, line.item.quantity)),
      now: pricingTime(ctx),
      redemptions: ctx.redemptions
    })
    const line_items = priceLineItems(lines, rule, evaluated.lineDiscounts)
    const discounts: Discounts | undefined = ctx.catalog.coupons.length === 0 && draft.codes.length === 0
      ? undefined
      : {
        codes: draft.codes,
        applied: evaluated.applied,
        rejected: evaluated.rejected.map(({ code, message, reason }) => ({ code, reason, message }))
      }
    const options = fulfillmentOptions({
      catalog: ctx.catalog,
      products,
      address: draft.address,
      rule,
      now: pricingTime(ctx)
    })
    return Either.map(selectOption(options, draft), (selected) => {
      const messages = readinessMessages({
        itemCount: draft.items.length,
        physical: products.some((product) => product.kind !== "digital"),
        address: draft.address,
        options,
        selectedOptionId: selected?.id,
        buyer: draft.buyer
      })
      return {
        status: messages.length === 0 ? "ready_for_payment" : "not_ready_for_payment",
        line_items,
        fulfillment_options: options,
        selectedOptionId: selected?.id,
        totals: computeTotals(line_items, selected),
        messages: [...messages, ...evaluated.rejected.map(rejectionMessage)],
        discounts,
        rejected: evaluated.rejected
      }
    })
  })

/** Sets or removes the optional fields buyer, fulfillment_address and fulfillment_option_id. */
const withChoices = (
  session: Session,
  buyer: Buyer | undefined,
  address: Address | undefined,
  optionId: string | undefined
): Session => {
  const { buyer: _buyer, fulfillment_address: _address, fulfillment_option_id: _option, ...rest } = session
  return {
    ...rest,
    ...(buyer === undefined ? {} : { buyer }),
    ...(address === undefined ? {} : { fulfillment_address: address }),
    ...(optionId === undefined ? {} : { fulfillment_option_id: optionId })
  }
}

/** Without the discounts (the pricing gives them again) nor a pending authentication request. */
const withoutPriced = (session: Session): Session => {
  const { authentication: _authentication, discounts: _discounts, ...rest } = session
  return rest
}

/**
 * The session with a draft and its pricing applied. Its status is the pricing's: a session that
 * required issuer authentication no longer does once re-priced (the agent completes again and
 * the provider asks again if the card still needs it, for the new amount). The merchant's
 * intervention notice is kept with the readiness messages.
 */
export const applyPriced = (session: Session, draft: Draft, priced: Priced): Session =>
  withChoices(
    {
      ...withoutPriced(session),
      ...(priced.discounts === undefined ? {} : { discounts: priced.discounts }),
      status: priced.status,
      items: draft.items,
      line_items: priced.line_items,
      fulfillment_options: priced.fulfillment_options,
      totals: priced.totals,
      messages: [...priced.messages, ...interventionMessages(session.capabilities)]
    },
    draft.buyer,
    draft.address,
    priced.selectedOptionId
  )

export const normalizeAddress = (address: Address | undefined): Address | undefined =>
  address === undefined ? undefined : { ...address, country: address.country.toUpperCase() }
