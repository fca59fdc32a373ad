/** A draft of a session's contents and everything derived from it: line ids, prices, readiness. */
import { Either } from "effect"
import type { CatalogSnapshot, Product } from "../../catalog/model/catalog.ts"
import { type Address, type FulfillmentOption } from "../../catalog/model/fulfillment.ts"
import { type Item, type LineItem, type Total } from "../../catalog/model/line-items.ts"
import { formatAmount, multiplyAmount } from "../../shared/money.ts"
import { sha256 } from "../../shared/sha256.ts"
import { type Discounts, evaluateDiscounts, type RejectedDiscount } from "../pricing/discounts.ts"
import {
  cheapestOption,
  computeTotals,
  fulfillmentOptions,
  priceLineItems,
  resolveTaxRule
} from "../pricing/pricing.ts"
import type { SuggestedPrice } from "./details.ts"
import { unitsFit } from "./inventory.ts"
import { interventionMessages, readinessMessages, unavailableMessages } from "./readiness.ts"
import type { Buyer, Message, MessageInfo } from "./schemas.ts"
import {
  OutOfStock,
  pricingTime,
  type ReducerContext,
  type Session,
  UnknownFulfillmentOption,
  UnknownProduct
} from "./session.ts"

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
 * An item no longer sold cannot be added (archived: unknown; out of stock at the merchant's word: none
 * available); one the session held already stays, a message at its line. The index reported is the item
 * at which a product's running total first exceeds what is available.
 */
export const checkItems = (
  items: ReadonlyArray<Item>,
  ctx: ReducerContext,
  held: ReadonlyArray<Item> = []
): Either.Either<void, UnknownProduct | OutOfStock> =>
  Either.flatMap(productsOf(items, ctx.catalog), (products) => {
    const kept = new Set(held.map((item) => item.id))
    for (const [index, item] of items.entries()) {
      const unavailable = products[index]?.unavailable
      if (unavailable === undefined || kept.has(item.id)) continue
      return Either.left(
        unavailable === "archived"
          ? new UnknownProduct({ index, productId: item.id })
          : new OutOfStock({ index, productId: item.id, requested: item.quantity, available: 0 })
      )
    }
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

export interface Draft {
  readonly items: ReadonlyArray<Item>
  readonly buyer: Buyer | undefined
  readonly address: Address | undefined
  /** Kept while still offered. */
  readonly previousOptionId: string | undefined
  /** Must be offered. */
  readonly requestedOptionId: string | undefined
  readonly codes: ReadonlyArray<string>
  /** Prices the agent saw in a feed, for the items at their index. */
  readonly suggested?: ReadonlyArray<SuggestedPrice> | undefined
}

export interface Priced {
  readonly status: "ready_for_payment" | "not_ready_for_payment"
  readonly line_items: ReadonlyArray<LineItem>
  readonly fulfillment_options: ReadonlyArray<FulfillmentOption>
  readonly selectedOptionId: string | undefined
  readonly totals: ReadonlyArray<Total>
  /** Readiness errors, then one info per rejected code. */
  readonly messages: ReadonlyArray<Message>
  /** Absent when the catalog has no coupons and no code was sent. */
  readonly discounts: Discounts | undefined
  /** With the index of their code, for `DiscountUnavailable`. */
  readonly rejected: ReadonlyArray<RejectedDiscount & { readonly index: number }>
}

/** An info per item whose feed price the agent saw is not the catalog's: the catalog's price applies. */
const suggestedPriceMessages = (
  draft: Draft,
  products: ReadonlyArray<Product>,
  currency: string
): ReadonlyArray<MessageInfo> =>
  (draft.suggested ?? []).flatMap((suggested) => {
    const product = products[suggested.index]
    if (product === undefined || draft.items[suggested.index]?.id !== suggested.item_id) return []
    if (product.unit_amount === suggested.amount) return []
    return [{
      type: "info",
      param: `$.line_items[${suggested.index}]`,
      content_type: "plain",
      content: `${product.title} costs ${formatAmount(product.unit_amount, currency)}, not the ${
        formatAmount(suggested.amount, currency)
      } of feed ${suggested.feed_id}: this price applies.`
    }]
  })

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
      const messages = [
        ...unavailableMessages(draft.items, ctx.catalog),
        ...readinessMessages({
          itemCount: draft.items.length,
          physical: products.some((product) => product.kind !== "digital"),
          address: draft.address,
          options,
          selectedOptionId: selected?.id,
          buyer: draft.buyer
        })
      ]
      return {
        status: messages.length === 0 ? "ready_for_payment" : "not_ready_for_payment",
        line_items,
        fulfillment_options: options,
        selectedOptionId: selected?.id,
        totals: computeTotals(line_items, selected),
        messages: [
          ...messages,
          ...evaluated.rejected.map(rejectionMessage),
          ...suggestedPriceMessages(draft, products, ctx.catalog.currency)
        ],
        discounts,
        rejected: evaluated.rejected
      }
    })
  })

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

/** The pricing gives the discounts again; a re-priced session no longer awaits authentication. */
const withoutPriced = (session: Session): Session => {
  const { authentication: _authentication, discounts: _discounts, ...rest } = session
  return rest
}

/** The status is the pricing's: for the new amount the provider asks again if the card needs authentication. */
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
